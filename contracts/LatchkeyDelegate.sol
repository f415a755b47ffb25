// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC7821} from "@openzeppelin/contracts/account/extensions/draft-ERC7821.sol";
import {ERC7579Utils, Execution} from "@openzeppelin/contracts/account/utils/draft-ERC7579Utils.sol";
import {ERC1155Holder} from "@openzeppelin/contracts/token/ERC1155/utils/ERC1155Holder.sol";
import {ERC721Holder} from "@openzeppelin/contracts/token/ERC721/utils/ERC721Holder.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignerEIP7702} from "@openzeppelin/contracts/utils/cryptography/signers/SignerEIP7702.sol";

/**
 * @title LatchkeyDelegate
 * @notice EIP-7702 delegate for Latchkey accounts: an EOA that delegates to this code runs a batch of
 * calls atomically, either because the EOA itself sent the transaction or because a sponsor relays
 * a batch the EOA signed (EIP-712 `BatchExecution`), paying the gas.
 *
 * `execute(mode, executionData)` follows ERC-7821:
 * - mode `0x01000000000000000000…` (batch, no opData): only the EOA itself may call
 *   (`msg.sender == address(this)`), as in OpenZeppelin's {ERC7821}.
 * - mode `0x01000000000078210001…` (batch with opData): anyone may relay;
 *   `executionData = abi.encode(Call[] calls, bytes opData)` with
 *   `opData = abi.encode(uint256 nonce, uint256 deadline, bytes signature)`, and the signature must be
 *   the EOA's over `BatchExecution(Call[] calls,uint256 nonce,uint256 deadline)`.
 *
 * The account keeps answering for its own key where verifiers look for code: ERC-1271
 * `isValidSignature` accepts exactly the signatures the EOA's key makes (ecrecover to
 * `address(this)`), so a message signed before or after delegation verifies the same way.
 *
 * The EIP-712 domain's `verifyingContract` is the EOA (`address(this)` under delegation) and its
 * `chainId` the current chain, so a signature made for another account, another chain or a
 * different delegate (other name/version) does not verify here.
 *
 * Reentrancy: the nonce is consumed before any call runs. A call in the batch that re-enters
 * `execute` with the same signed batch fails on the nonce (and the whole batch reverts); re-entering
 * with a batch for the next nonce needs another signature by the EOA, and re-entering without
 * opData needs `msg.sender == address(this)`, i.e. a call the signed batch itself made to the
 * account. Neither gives a third party anything the EOA did not sign, so no lock is taken (a lock
 * would also forbid the account's own nested batches).
 *
 * Storage: the only state is the batch nonce, kept in an ERC-7201 namespaced slot so that the EOA's
 * storage, which outlives any delegation, cannot collide with the layout of a later delegate.
 * (The inherited {EIP712} declares two legacy string slots that are only written for names or
 * versions of 32 bytes or more; the short name and version below never write them.)
 */
contract LatchkeyDelegate is ERC7821, EIP712, SignerEIP7702, IERC1271, ERC721Holder, ERC1155Holder {
    /// @dev ERC-7821 batch mode with opData: call type 0x01, exec type 0x00, selector 0x78210001.
    bytes32 internal constant MODE_BATCH_WITH_OP_DATA =
        0x0100000000007821000100000000000000000000000000000000000000000000;

    bytes32 internal constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");

    bytes32 internal constant BATCH_EXECUTION_TYPEHASH =
        keccak256(
            "BatchExecution(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data)"
        );

    /// @custom:storage-location erc7201:latchkey.delegate
    struct DelegateStorage {
        uint256 nonce;
    }

    /// @dev keccak256(abi.encode(uint256(keccak256("latchkey.delegate")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant DELEGATE_STORAGE_LOCATION =
        0x437a9be6cabbb85aa6fa29fddae35274411964b2ebf3d5ae7111e4d7dbbabd00;

    /// @notice The batch's `deadline` (unix seconds) has passed.
    error ExpiredBatch(uint256 deadline);

    /// @notice The batch's `nonce` is not the account's next one.
    error InvalidBatchNonce(uint256 expected, uint256 given);

    /// @notice The batch signature is malformed or was not made by this account.
    error InvalidBatchSignature();

    /// @notice A signed batch ran: `nonce` is the one it consumed.
    event BatchExecuted(uint256 indexed nonce, address indexed relayer);

    constructor() EIP712("LatchkeyDelegate", "1") {}

    /// @dev Accepts plain ETH transfers: a delegated EOA must still be able to receive ETH.
    receive() external payable {}

    /// @notice The nonce the next signed batch must carry.
    function nonce() public view returns (uint256) {
        return _delegateStorage().nonce;
    }

    /// @notice The EIP-712 digest the account signs for a batch (domain: this account, this chain).
    function hashBatchExecution(
        Execution[] calldata calls,
        uint256 batchNonce,
        uint256 deadline
    ) public view returns (bytes32) {
        bytes32[] memory callHashes = new bytes32[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            callHashes[i] = keccak256(
                abi.encode(CALL_TYPEHASH, calls[i].target, calls[i].value, keccak256(calls[i].callData))
            );
        }
        return
            _hashTypedDataV4(
                keccak256(
                    abi.encode(
                        BATCH_EXECUTION_TYPEHASH,
                        keccak256(abi.encodePacked(callHashes)),
                        batchNonce,
                        deadline
                    )
                )
            );
    }

    /// @inheritdoc ERC7821
    function execute(bytes32 mode, bytes calldata executionData) public payable override {
        if (mode == MODE_BATCH_WITH_OP_DATA) {
            Execution[] calldata calls = ERC7579Utils.decodeBatch(executionData);
            bytes calldata opData = _bytesAt(executionData, 0x20);
            if (opData.length < 0x60) revert ERC7579Utils.ERC7579DecodingError();
            uint256 batchNonce = uint256(bytes32(opData[0x00:0x20]));
            uint256 deadline = uint256(bytes32(opData[0x20:0x40]));
            bytes calldata signature = _bytesAt(opData, 0x40);
            if (block.timestamp > deadline) revert ExpiredBatch(deadline);
            DelegateStorage storage $ = _delegateStorage();
            if (batchNonce != $.nonce) revert InvalidBatchNonce($.nonce, batchNonce);
            if (!_rawSignatureValidation(hashBatchExecution(calls, batchNonce, deadline), signature))
                revert InvalidBatchSignature();
            // Consumed before any call runs: see "Reentrancy" above.
            $.nonce = batchNonce + 1;
            emit BatchExecuted(batchNonce, msg.sender);
            ERC7579Utils.execBatch(executionData, ERC7579Utils.EXECTYPE_DEFAULT);
            return;
        }
        super.execute(mode, executionData);
    }

    /// @inheritdoc ERC7821
    function supportsExecutionMode(bytes32 mode) public view override returns (bool) {
        return mode == MODE_BATCH_WITH_OP_DATA || super.supportsExecutionMode(mode);
    }

    /// @notice ERC-1271: valid when the EOA's own key made `signature` over `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        return _rawSignatureValidation(hash, signature) ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }

    /**
     * @dev The ABI-encoded `bytes` whose offset is the word at `head` in `data` (offsets count from
     * the start of `data`, as in `abi.encode`), bounds-checked against `data`.
     */
    function _bytesAt(bytes calldata data, uint256 head) private pure returns (bytes calldata value) {
        if (data.length < head + 0x20) revert ERC7579Utils.ERC7579DecodingError();
        uint256 offset = uint256(bytes32(data[head:head + 0x20]));
        if (offset > data.length - 0x20) revert ERC7579Utils.ERC7579DecodingError();
        uint256 length = uint256(bytes32(data[offset:offset + 0x20]));
        if (length > data.length - offset - 0x20) revert ERC7579Utils.ERC7579DecodingError();
        value = data[offset + 0x20:offset + 0x20 + length];
    }

    function _delegateStorage() private pure returns (DelegateStorage storage $) {
        assembly ("memory-safe") {
            $.slot := DELEGATE_STORAGE_LOCATION
        }
    }
}

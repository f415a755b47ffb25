// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice For tests: the part of an OP Stack chain's `GasPriceOracle` predeploy
/// (0x420000000000000000000000000000000000000F) that the service reads to count a transaction's
/// L1 data fee, which the sender pays beside its L2 gas. A test places this code at that address
/// on anvil and sets the price per byte; a real chain's oracle prices by the L1's base and blob
/// fees and the transaction's compressed size.
contract L1FeeOracle {
    uint256 public feePerByte;

    function setFeePerByte(uint256 value) external {
        feePerByte = value;
    }

    /// @notice The most the L1 data fee of an unsigned transaction of `unsignedTxSize` bytes can
    /// be (the signature adds 68 bytes, as the predeploy counts it).
    function getL1FeeUpperBound(uint256 unsignedTxSize) external view returns (uint256) {
        return (unsignedTxSize + 68) * feePerByte;
    }

    /// @notice The L1 data fee of a signed transaction `data`.
    function getL1Fee(bytes calldata data) external view returns (uint256) {
        return data.length * feePerByte;
    }
}

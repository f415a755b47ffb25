// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice For l2Fees.test.ts: a stand-in for Scroll's `L1GasPriceOracle` predeploy
/// (0x5300000000000000000000000000000000000002), whose `getL1Fee` prices a signed transaction.
/// Since Feynman Scroll charges data that compresses badly more, and since Galileo it prices the
/// compressed transaction: this one prices the bytes' runs (a run-length compressor's size), so
/// the same byte repeated costs almost nothing and bytes without runs cost the most.
contract ScrollStyleL1FeeOracle {
    uint256 public feePerByte;

    function getL1Fee(bytes calldata data) external view returns (uint256) {
        uint256 runs;
        for (uint256 i = 0; i < data.length; i++) if (i == 0 || data[i] != data[i - 1]) runs++;
        return runs * feePerByte;
    }
}

/// @notice For l2Fees.test.ts: an OP Stack `GasPriceOracle` (0x420000000000000000000000000000000000000F)
/// since Isthmus, with an operator fee of `operatorFeePerGas` a unit of gas used and
/// `operatorFeeConstant` a transaction, beside an L1 data fee of `feePerByte` a byte.
contract IsthmusGasPriceOracle {
    uint256 public feePerByte;
    uint256 public operatorFeePerGas;
    uint256 public operatorFeeConstant;

    function getL1FeeUpperBound(uint256 unsignedTxSize) external view returns (uint256) {
        return (unsignedTxSize + 68) * feePerByte;
    }

    function getL1Fee(bytes calldata data) external view returns (uint256) {
        return (data.length + 68) * feePerByte;
    }

    function getOperatorFee(uint256 gasUsed) external view returns (uint256) {
        return gasUsed * operatorFeePerGas + operatorFeeConstant;
    }
}

// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice A call target that calls back into its caller with given calldata, to test re-entry.
contract Reenterer {
    /// @notice Calls `target` with `data`, bubbling a revert up unchanged.
    function reenter(address target, bytes calldata data) external payable {
        (bool ok, bytes memory returndata) = target.call(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(returndata, 0x20), mload(returndata))
            }
        }
    }
}

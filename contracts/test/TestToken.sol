// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice An ERC-20 for tests and the playground: anyone may mint, so a fresh account can hold some.
contract TestToken is ERC20 {
    constructor() ERC20("Latchkey Test Token", "LKT") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}

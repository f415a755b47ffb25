export {
  BATCH_EXECUTED_TOPIC,
  BATCH_EXECUTION_TYPES,
  type BatchExecutionParameters,
  type BatchExecutionTypedData,
  batchExecutionDigest,
  batchExecutionTypedData,
  DELEGATE_DOMAIN,
  type DelegateCall,
  EXECUTE_BATCH_MODE,
  EXECUTE_BATCH_WITH_OP_DATA_MODE,
  EXECUTE_SELECTOR_HEX,
  type ExecuteBatchParameters,
  encodeExecuteBatch,
  encodeSelfExecuteBatch,
} from './batchExecution.ts'
export { delegateContract } from './delegateContract.ts'
export {
  CREATE2_FACTORY,
  DELEGATE_ADDRESS,
  type DeployDelegateOptions,
  deployDelegate,
} from './deployDelegate.ts'
export { type EthRpc, type HttpEthRpcOptions, httpEthRpc } from './ethRpc.ts'
export { readDelegateNonce } from './readDelegateNonce.ts'
export { readDelegation } from './readDelegation.ts'

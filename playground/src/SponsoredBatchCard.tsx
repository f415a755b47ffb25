import { useEffect, useState } from 'react'
import {
  createWalletClient,
  encodeFunctionData,
  formatEther,
  formatUnits,
  type Hex,
  http,
  parseUnits,
} from 'viem'
import { waitForTransactionReceipt, writeContract } from 'viem/actions'
import { useBalance, useCallsStatus, useCapabilities, useReadContract, useSendCalls } from 'wagmi'
import testToken from '../../contracts/test/TestToken.json'
import type { EvmConfig } from './SendTransactionPanel.tsx'

const BURN_ADDRESS = '0x000000000000000000000000000000000000dEaD'
const abi = testToken.abi

/**
 * A user who just signed up holds no ETH, yet sends an ERC-20 approve and transfer in one atomic
 * batch: wagmi's `useSendCalls` with the `gasSponsorship` capability, through the Latchkey
 * connector's EIP-5792 (`eth_send_transaction` with `sponsor: true`), the organization's sponsor
 * paying the gas; `useCallsStatus` follows it until included.
 */
export function SponsoredBatchCard({ evm, address }: { evm: EvmConfig; address: `0x${string}` }) {
  const [token, setToken] = useState<`0x${string}` | null>(null)
  const [setup, setSetup] = useState<string | null>(null)
  const capabilities = useCapabilities()
  const eth = useBalance({ address })
  const tokens = useReadContract({
    address: token ?? undefined,
    abi,
    functionName: 'balanceOf',
    args: [address],
    query: { enabled: token !== null },
  })
  const send = useSendCalls()
  const status = useCallsStatus({
    id: send.data?.id as string,
    query: {
      enabled: send.data !== undefined,
      refetchInterval: (query) => (query.state.data?.status === 'pending' || !query.state.data ? 500 : false),
    },
  })
  // Once the batch is included (or has failed), the balances it changed are read again: the
  // transfer's 10 LKT leave the LKT chip, not only the ETH one.
  const settled = status.data?.status === 'success' || status.data?.status === 'failure'
  const refetchTokens = tokens.refetch
  const refetchEth = eth.refetch
  useEffect(() => {
    if (!settled) return
    void refetchTokens()
    void refetchEth()
  }, [settled, refetchTokens, refetchEth])
  const sponsored = Boolean(
    (capabilities.data?.[evm.chainId] as { gasSponsorship?: { supported?: boolean } } | undefined)
      ?.gasSponsorship,
  )

  // The node's unlocked dev account deploys a test token and mints some to the user: the user pays nothing.
  const deployToken = async () => {
    setSetup('Deploying the test token…')
    try {
      const faucet = createWalletClient({ transport: http(evm.rpcUrl) })
      const account = evm.faucetAccount as `0x${string}`
      const deployed = await faucet.request({
        method: 'eth_sendTransaction',
        params: [{ from: account, data: testToken.bytecode as Hex }],
      })
      const receipt = await waitForTransactionReceipt(faucet, { hash: deployed })
      const address_ = receipt.contractAddress as `0x${string}`
      const minted = await writeContract(faucet, {
        account,
        chain: null,
        address: address_,
        abi,
        functionName: 'mint',
        args: [address, parseUnits('100', 18)],
      })
      await waitForTransactionReceipt(faucet, { hash: minted })
      setToken(address_)
      setSetup(null)
    } catch (error) {
      setSetup((error as Error).message)
    }
  }

  const amount = parseUnits('10', 18)
  return (
    <section className="pg-card" aria-labelledby="pg-wagmi-batch-title">
      <h2 id="pg-wagmi-batch-title">useSendCalls() — sponsored</h2>
      <div className="pg-row" style={{ marginBottom: 12 }}>
        <span className="pg-chip" data-testid="wagmi-batch-eth">
          ETH: {eth.data ? formatEther(eth.data.value) : '—'}
        </span>
        <span className="pg-chip" data-testid="wagmi-batch-tokens">
          LKT: {tokens.data !== undefined ? formatUnits(tokens.data as bigint, 18) : '—'}
        </span>
        {sponsored ? <span className="pg-chip">gasSponsorship capability</span> : null}
      </div>
      <div className="pg-row">
        {token ? null : (
          <button type="button" className="pg-button pg-button-small" onClick={() => void deployToken()}>
            Deploy a test token and mint 100 LKT to me
          </button>
        )}
        <button
          type="button"
          className="pg-button pg-button-primary"
          disabled={!token || send.isPending}
          onClick={() =>
            token &&
            send.mutate({
              calls: [
                {
                  to: token,
                  data: encodeFunctionData({ abi, functionName: 'approve', args: [BURN_ADDRESS, amount] }),
                },
                {
                  to: token,
                  data: encodeFunctionData({ abi, functionName: 'transfer', args: [BURN_ADDRESS, amount] }),
                },
              ],
              forceAtomic: true,
              capabilities: { gasSponsorship: {} },
            })
          }
        >
          {send.isPending ? 'Sending…' : 'Approve and transfer 10 LKT, sponsored'}
        </button>
      </div>
      {setup ? <p className="pg-muted">{setup}</p> : null}
      <div aria-live="polite">
        {send.error ? (
          <p className="pg-error" role="alert">
            {send.error.message}
          </p>
        ) : null}
        {send.data ? (
          <dl className="pg-result" style={{ margin: 0 }}>
            <dt>Batch id</dt>
            <dd data-testid="wagmi-batch-id">{send.data.id}</dd>
            <dt>Status</dt>
            <dd data-testid="wagmi-calls-status">{status.data?.status ?? 'pending'}</dd>
            {status.data?.receipts?.[0] ? (
              <>
                <dt>Transaction hash</dt>
                <dd>{status.data.receipts[0].transactionHash}</dd>
              </>
            ) : null}
          </dl>
        ) : null}
      </div>
    </section>
  )
}

// <AgentAllowance/>'s revoke under an MFA policy waits for a code at delete_users, and the agent's
// key keeps signing until the code is given (docs/agents.md). The step-up it showed was the
// generic "Confirm it's you … to continue", and cancelling it put focus back on Revoke with no
// word: nothing told the user the agent was still live. Now the waiting step says so, and a
// cancelled revoke leaves a notice that it was not revoked.
import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { createElement } from 'react'
import { serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { confirmTotpFactor } from '../../core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createTotpFactor } from '../../core/actions/activities/createTotpFactor.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { grantAgentAllowance } from '../../core/actions/activities/grantAgentAllowance.ts'
import { signTransaction } from '../../core/actions/activities/signTransaction.ts'
import { addSessionFromKey } from '../../core/session/sessions.ts'
import { totpCode } from '../../core/test/totpCode.ts'
import { createLatchkey } from '../../react/index.ts'
import { signedInClient } from '../test/renderWithService.tsx'
import { AgentAllowance } from './AgentAllowance.tsx'

const SHOP = '0x00000000000000000000000000000000000f00d5'
let nonce = 0
const tx = (value: bigint) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 8453,
    nonce: nonce++,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    gas: 21_000n,
    to: SHOP,
    value,
  })

describe('<AgentAllowance/> revoke under MFA', () => {
  it('tells the user the agent still signs while the revoke waits for the code, and after it is cancelled', {
    timeout: 60_000,
  }, async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const agentKey = await agent.keyStore.create({ scope: session.organizationId })
    const grant = await grantAgentAllowance(client, {
      agentName: 'Shopping agent',
      publicKey: agentKey.publicKey,
      caip2: 'eip155:8453',
      amount: '10000000000000000',
      period: 'PERIOD_DAY',
    })
    addSessionFromKey(agent, {
      publicKey: agentKey.publicKey,
      userId: grant.userId,
      organizationId: session.organizationId,
      lifetimeSeconds: 3600,
      method: 'api-key',
      label: 'agent',
    })
    // Then the user turns on a second factor (any MFA policy: delete_users waits for it).
    const { factorId, secret } = await createTotpFactor(client, { factorName: 'Phone' })
    await confirmTotpFactor(client, { factorId, code: totpCode(secret, Date.now()) })
    await createMfaPolicy(client, {
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 0,
    })

    render(createElement(AgentAllowance, { caip2: 'eip155:8453' }))
    await user.click(await screen.findByRole('button', { name: 'Revoke the allowance of Shopping agent' }))
    await user.click(await screen.findByRole('button', { name: 'Yes, revoke' }))
    await screen.findByRole('textbox', { name: 'Authenticator code' })
    // The revoke is waiting: the agent's key signs right now.
    await signTransaction(agent, {
      signWith: addresses[0] as string,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: tx(1_000n),
    })
    // Safe: the waiting step says so (the key still signs until the code is given).
    expect(screen.getByText('Shopping agent can still sign until you enter the code.')).toBeTruthy()

    // Cancelled: the revoke is not done, the agent still signs; the user must be told.
    await user.keyboard('{Escape}')
    await waitFor(() => expect(screen.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull())
    await signTransaction(agent, {
      signWith: addresses[0] as string,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: tx(1_000n),
    })
    expect(await screen.findByText('Not revoked: Shopping agent can still sign.')).toBeTruthy()
    expect(screen.queryByText('Shopping agent can still sign until you enter the code.')).toBeNull()
    await waitFor(() =>
      expect(document.activeElement).toBe(
        screen.getByRole('button', { name: 'Revoke the allowance of Shopping agent' }),
      ),
    )
  })
})

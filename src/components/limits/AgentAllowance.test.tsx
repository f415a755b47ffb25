import type { Address } from '@solana/kit'
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import axe from 'axe-core'
import { encodeFunctionData, erc20Abi, serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { confirmTotpFactor } from '../../core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createSpendingLimit } from '../../core/actions/activities/createSpendingLimit.ts'
import { createTotpFactor } from '../../core/actions/activities/createTotpFactor.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { grantAgentAllowance } from '../../core/actions/activities/grantAgentAllowance.ts'
import { signTransaction } from '../../core/actions/activities/signTransaction.ts'
import { getUsers } from '../../core/actions/queries/getUsers.ts'
import { SpendingLimitExceededError } from '../../core/errors.ts'
import { addSessionFromKey } from '../../core/session/sessions.ts'
import { USDC_MINT, unsignedSplTransfer } from '../../core/test/splTransfer.ts'
import { totpCode } from '../../core/test/totpCode.ts'
import type { Latchkey } from '../../core/types.ts'
import { createLatchkey } from '../../react/index.ts'
import { signedInClient } from '../test/renderWithService.tsx'
import { AgentAllowance } from './AgentAllowance.tsx'

const SHOP = '0x00000000000000000000000000000000000f00d5'
const TOKEN = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const SHOP_SOL = 'Shop111111111111111111111111111111111111111' as Address

async function axeViolations() {
  const result = await axe.run(document.body, {
    resultTypes: ['violations'],
    rules: { 'color-contrast': { enabled: false }, region: { enabled: false } },
  })
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/**
 * Signs `agent` in with its key as the user a grant made for it (found by name): what a back end
 * holding the agent's key does.
 */
async function signInAgent(
  client: Latchkey,
  agent: Latchkey,
  {
    publicKey,
    organizationId,
    userName,
    userId,
  }: { publicKey: string; organizationId: string; userName?: string; userId?: string },
) {
  const id =
    userId ?? ((await getUsers(client, {})).users.find((u) => u.userName === userName)?.userId as string)
  addSessionFromKey(agent, {
    publicKey,
    userId: id,
    organizationId,
    lifetimeSeconds: 3600,
    method: 'api-key',
    label: 'agent',
  })
}

let nonce = 0
/** A transfer that pays no fee, so the allowance shows its value alone (a fee counts too). */
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

describe('<AgentAllowance/>', () => {
  it('grants an agent an allowance, shows its use, and revokes it; keyboard only, focus following', async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    // The agent: its own client and key, as a back end would hold them.
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const agentKey = await agent.keyStore.create({ scope: session.organizationId })

    const view = render(<AgentAllowance caip2="eip155:8453" />)
    expect(await screen.findByText('No agent has an allowance.')).toBeTruthy()
    expect(await axeViolations()).toEqual([])

    // Keyboard only: tab to the button, Enter opens the form (loaded on demand), focus on its first field.
    await user.tab()
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Grant an allowance' }))
    await user.keyboard('{Enter}')
    const name = await screen.findByRole('textbox', { name: 'Agent name' })
    await waitFor(() => expect(document.activeElement).toBe(name))

    // Nothing filled in: each field says what is wrong, and focus goes to the first.
    const form = screen.getByRole('form', { name: 'Grant an allowance' })
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(screen.getByText('Enter a name for the agent.')).toBeTruthy()
    expect(screen.getByText(/^Enter a compressed P-256 public key/)).toBeTruthy()
    expect(screen.getByText(/^Enter an amount above 0/)).toBeTruthy()
    expect(name.getAttribute('aria-invalid')).toBe('true')
    expect(document.activeElement).toBe(name)
    expect(await axeViolations()).toEqual([])

    await user.type(name, 'Shopping agent')
    // Edited, a field drops its error (checked again on the next submit); the others keep theirs.
    expect(screen.queryByText('Enter a name for the agent.')).toBeNull()
    expect(name.getAttribute('aria-invalid')).toBeNull()
    expect(screen.getByText(/^Enter a compressed P-256 public key/)).toBeTruthy()
    await user.type(screen.getByRole('textbox', { name: 'Agent public key' }), agentKey.publicKey)
    // "1,000" is a thousand to some and one to others: the form asks, focus on the amount.
    const amount = screen.getByRole('textbox', { name: 'Amount (ETH)' })
    await user.type(amount, '1,000')
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(
      screen.getByText('“1,000” could be 1000 or 1.000. Write the amount without a thousands separator.'),
    ).toBeTruthy()
    expect(document.activeElement).toBe(amount)
    await user.clear(amount)
    expect(screen.queryByText(/could be 1000 or 1\.000/)).toBeNull()
    expect(amount.getAttribute('aria-invalid')).toBeNull()
    await user.type(amount, '0.01')
    const destinations = screen.getByRole('textbox', { name: 'Only to these addresses (optional)' })
    await user.type(destinations, 'not an address')
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(screen.getByText('Line 1 is not an address (0x and 40 hex characters).')).toBeTruthy()
    expect(document.activeElement).toBe(destinations)
    await user.clear(destinations)
    await user.type(destinations, SHOP)
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))

    expect(await screen.findByText('Shopping agent has an allowance now.')).toBeTruthy()
    expect(await screen.findByText('0.01 ETH left today')).toBeTruthy()
    expect(screen.getByText('0 ETH of 0.01 ETH')).toBeTruthy()
    expect(screen.getByText(SHOP)).toBeTruthy()
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Grant an allowance' })),
    )
    expect(await axeViolations()).toEqual([])

    // The agent spends with its own key: 0.004 ETH passes, 0.007 more is over the allowance.
    await signInAgent(client, agent, {
      publicKey: agentKey.publicKey,
      organizationId: session.organizationId,
      userName: 'Shopping agent',
    })
    const sign = (value: bigint) =>
      signTransaction(agent, {
        signWith: addresses[0] as string,
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: tx(value),
      })
    await sign(4_000_000_000_000_000n)
    await expect(sign(7_000_000_000_000_000n)).rejects.toBeInstanceOf(SpendingLimitExceededError)
    view.unmount()
    render(<AgentAllowance caip2="eip155:8453" />)
    expect(await screen.findByText('0.006 ETH left today')).toBeTruthy()
    expect(screen.getByText('0.004 ETH of 0.01 ETH')).toBeTruthy()
    expect(screen.getByText(/^· frees at [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}/)).toBeTruthy()

    // Revoke asks first, focus on its "Yes"; Escape takes it back to the row's Revoke, nothing revoked.
    const revoke = screen.getByRole('button', { name: 'Revoke the allowance of Shopping agent' })
    await user.click(revoke)
    expect(
      screen.getByRole('group', { name: /^Revoke the allowance of Shopping agent\? Its key stops/ }),
    ).toBeTruthy()
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Yes, revoke' })),
    )
    expect(await axeViolations()).toEqual([])
    await user.keyboard('{Escape}')
    await waitFor(() => expect(document.activeElement).toBe(revoke))
    expect(screen.queryByRole('button', { name: 'Yes, revoke' })).toBeNull()
    expect(await sign(1n)).toBeTruthy()

    // Revoke, yes: the row goes, the key can no longer sign, focus returns to the grant button.
    await user.keyboard('{Enter}')
    await user.click(await screen.findByRole('button', { name: 'Yes, revoke' }))
    expect(
      await screen.findByText('The allowance of Shopping agent is revoked. Its key can no longer sign.'),
    ).toBeTruthy()
    expect(await screen.findByText('No agent has an allowance.')).toBeTruthy()
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Grant an allowance' })),
    )
    await expect(sign(1n)).rejects.toMatchObject({ status: 401 })
    expect(await axeViolations()).toEqual([])
  })

  it('grants an ERC-20 allowance in token units and lists only agents, not every key-scoped limit', async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const agentKey = await agent.keyStore.create({ scope: session.organizationId })
    const { users } = await (await import('../../core/actions/queries/getUsers.ts')).getUsers(client, {})
    // A limit on the user's own session key, set by the app: not an agent's, never listed or revocable here.
    const ownKey = users[0]!.apiKeys[0]!.apiKeyId
    await createSpendingLimit(client, {
      spendingLimitName: 'My own key',
      scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId: ownKey },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
      amount: '1000',
    })
    const view = render(<AgentAllowance caip2="eip155:8453" />)
    expect(await screen.findByText('No agent has an allowance.')).toBeTruthy()
    expect(screen.queryByText('My own key')).toBeNull()

    await user.click(screen.getByRole('button', { name: 'Grant an allowance' }))
    await user.type(await screen.findByRole('textbox', { name: 'Agent name' }), 'Payroll bot')
    await user.type(screen.getByRole('textbox', { name: 'Agent public key' }), agentKey.publicKey)
    await user.selectOptions(screen.getByRole('combobox', { name: 'Asset' }), 'token')
    const form = screen.getByRole('form', { name: 'Grant an allowance' })
    // The token's fields are checked like the others, the amount against the token's decimals.
    const decimals = screen.getByRole('textbox', { name: 'Decimals' })
    await user.clear(decimals)
    await user.type(decimals, '6')
    await user.type(screen.getByRole('textbox', { name: 'Amount (ERC-20 token)' }), '25.0000001')
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(screen.getByText('Enter the token’s contract address (0x and 40 hex characters).')).toBeTruthy()
    expect(screen.getByText('Enter the token’s symbol: 1 to 11 letters or digits.')).toBeTruthy()
    expect(screen.getByText('Enter an amount above 0 with at most 6 decimals.')).toBeTruthy()
    expect(document.activeElement).toBe(screen.getByRole('textbox', { name: 'Token contract' }))
    expect(await axeViolations()).toEqual([])
    await user.type(screen.getByRole('textbox', { name: 'Token contract' }), TOKEN)
    await user.type(screen.getByRole('textbox', { name: 'Symbol' }), 'USDC')
    const amount = screen.getByRole('textbox', { name: 'Amount (USDC)' })
    await user.clear(amount)
    await user.type(amount, '25')
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(await screen.findByText('Payroll bot has an allowance now.')).toBeTruthy()
    expect(await screen.findByText('25 USDC left today')).toBeTruthy()
    expect(screen.getByText('0 USDC of 25 USDC')).toBeTruthy()
    expect(screen.getByText(TOKEN.toLowerCase())).toBeTruthy()
    expect(screen.queryByText('My own key')).toBeNull()
    expect(screen.getAllByRole('button', { name: /^Revoke the allowance of/ })).toHaveLength(1)

    // The agent pays 10.5 USDC (transfer calldata): the row shows it in USDC, not in base units.
    await signInAgent(client, agent, {
      publicKey: agentKey.publicKey,
      organizationId: session.organizationId,
      userName: 'Payroll bot',
    })
    await signTransaction(agent, {
      signWith: addresses[0] as string,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: serializeTransaction({
        type: 'eip1559',
        chainId: 8453,
        nonce: nonce++,
        maxFeePerGas: 2n * 10n ** 9n,
        maxPriorityFeePerGas: 10n ** 9n,
        gas: 60_000n,
        to: TOKEN,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [SHOP, 10_500_000n] }),
      }),
    })
    view.unmount()
    render(<AgentAllowance caip2="eip155:8453" />)
    expect(await screen.findByText('14.5 USDC left today')).toBeTruthy()
    expect(screen.getByText('10.5 USDC of 25 USDC')).toBeTruthy()
    expect(await axeViolations()).toEqual([])
  })

  it('shows an SPL token allowance in its token, with its mint', async () => {
    const { client, session, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['solana'] })
    const from = addresses[0] as Address
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const agentKey = await agent.keyStore.create({ scope: session.organizationId })
    const grant = await grantAgentAllowance(client, {
      agentName: 'Payroll bot',
      publicKey: agentKey.publicKey,
      caip2: 'solana:mainnet',
      period: 'PERIOD_DAY',
      amount: '25000000',
      asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint: USDC_MINT },
      token: { symbol: 'USDC', decimals: 6 },
    })
    await signInAgent(client, agent, {
      publicKey: agentKey.publicKey,
      organizationId: session.organizationId,
      userId: grant.userId,
    })
    // The agent pays 10.5 USDC with a TransferChecked from the wallet's USDC account.
    await signTransaction(agent, {
      signWith: from,
      type: 'TRANSACTION_TYPE_SOLANA',
      unsignedTransaction: await unsignedSplTransfer({ from, to: SHOP_SOL, amount: 10_500_000n }),
    })
    render(<AgentAllowance caip2="solana:mainnet" />)
    expect(await screen.findByText('14.5 USDC left today')).toBeTruthy()
    expect(screen.getByText('10.5 USDC of 25 USDC')).toBeTruthy()
    expect(screen.getByText(USDC_MINT)).toBeTruthy()
    expect(await axeViolations()).toEqual([])
  })

  it('on a Solana cluster grants in SOL or an SPL token at its mint, base58 addresses kept as typed', async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['solana'] })
    const from = addresses[0] as Address
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const agentKey = await agent.keyStore.create({ scope: session.organizationId })
    const view = render(<AgentAllowance caip2="solana:mainnet" />)
    await user.click(await screen.findByRole('button', { name: 'Grant an allowance' }))
    await user.type(await screen.findByRole('textbox', { name: 'Agent name' }), 'Payroll bot')
    await user.type(screen.getByRole('textbox', { name: 'Agent public key' }), agentKey.publicKey)
    const form = screen.getByRole('form', { name: 'Grant an allowance' })
    // In SOL, not ETH: 9 decimals (lamports), and addresses in base58.
    const asset = screen.getByRole('combobox', { name: 'Asset' })
    expect(
      within(asset)
        .getAllByRole('option')
        .map((option) => option.textContent),
    ).toEqual(['SOL', 'SPL token'])
    await user.type(screen.getByRole('textbox', { name: 'Amount (SOL)' }), '0.0000000001')
    await user.type(screen.getByRole('textbox', { name: /Only to these addresses/ }), SHOP)
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(screen.getByText('Enter an amount above 0 with at most 9 decimals.')).toBeTruthy()
    expect(screen.getByText('Line 1 is not a Solana address (32 to 44 base58 characters).')).toBeTruthy()
    // An SPL token, at its mint.
    await user.selectOptions(asset, 'token')
    expect((screen.getByRole('textbox', { name: 'Decimals' }) as HTMLInputElement).value).toBe('6')
    // Under a token, the addresses are also the only wallets whose token account the agent may
    // create, paid from the user's SOL (the policy allows no other).
    expect(
      screen.getByRole('textbox', { name: /Only to these addresses/ }).getAttribute('aria-describedby'),
    ).toMatch(/-destinations-hint/)
    expect(
      screen.getByText(
        'One address per line. The agent may open a listed address’s account for this token, paid from your SOL (about 0.002 SOL). Leave empty for any address that already has one.',
      ),
    ).toBeTruthy()
    await user.type(screen.getByRole('textbox', { name: 'Token mint' }), '0xdead')
    await user.type(screen.getByRole('textbox', { name: 'Symbol' }), 'USDC')
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(screen.getByText('Enter the token’s mint address (32 to 44 base58 characters).')).toBeTruthy()
    expect(document.activeElement).toBe(screen.getByRole('textbox', { name: 'Token mint' }))
    expect(await axeViolations()).toEqual([])
    await user.clear(screen.getByRole('textbox', { name: 'Token mint' }))
    await user.type(screen.getByRole('textbox', { name: 'Token mint' }), USDC_MINT)
    const amount = screen.getByRole('textbox', { name: 'Amount (USDC)' })
    await user.clear(amount)
    await user.type(amount, '25')
    const destinations = screen.getByRole('textbox', { name: /Only to these addresses/ })
    await user.clear(destinations)
    await user.type(destinations, SHOP_SOL)
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(await screen.findByText('Payroll bot has an allowance now.')).toBeTruthy()
    expect(await screen.findByText('25 USDC left today')).toBeTruthy()
    expect(screen.getByText(USDC_MINT)).toBeTruthy()
    // The address as typed: base58 is case-sensitive, and the limit's allow-list holds it so.
    expect(screen.getByText(SHOP_SOL)).toBeTruthy()

    // The agent pays 10.5 USDC to the shop: counted in USDC, and allowed by the list.
    await signInAgent(client, agent, {
      publicKey: agentKey.publicKey,
      organizationId: session.organizationId,
      userName: 'Payroll bot',
    })
    await signTransaction(agent, {
      signWith: from,
      type: 'TRANSACTION_TYPE_SOLANA',
      unsignedTransaction: await unsignedSplTransfer({ from, to: SHOP_SOL, amount: 10_500_000n }),
    })
    view.unmount()
    render(<AgentAllowance caip2="solana:mainnet" />)
    expect(await screen.findByText('14.5 USDC left today')).toBeTruthy()
    expect(screen.getByText('10.5 USDC of 25 USDC')).toBeTruthy()
  })

  it('refuses a second allowance under a name an agent already has, before anything is created', async () => {
    const { client, render } = await signedInClient()
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const first = await agent.keyStore.create({ scope: 'agent' })
    await grantAgentAllowance(client, {
      agentName: 'Playground agent',
      publicKey: first.publicKey,
      caip2: 'eip155:8453',
      amount: '10000000000000000',
      period: 'PERIOD_DAY',
    })
    const usersBefore = (await getUsers(client, {})).users.length
    // A new key (the page made another), the same default name.
    const second = await agent.keyStore.create({ scope: 'agent' })
    const user = userEvent.setup()
    render(
      <AgentAllowance
        caip2="eip155:8453"
        agentPublicKey={second.publicKey}
        defaultAgentName="Playground agent"
      />,
    )
    await user.click(await screen.findByRole('button', { name: 'Grant an allowance' }))
    const name = await screen.findByRole('textbox', { name: 'Agent name' })
    await user.type(screen.getByRole('textbox', { name: 'Amount (ETH)' }), '0.01')
    const form = screen.getByRole('form', { name: 'Grant an allowance' })
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(
      screen.getByText('An agent already has an allowance under this name. Choose another name.'),
    ).toBeTruthy()
    expect(name.getAttribute('aria-invalid')).toBe('true')
    expect(document.activeElement).toBe(name)
    expect(screen.queryByRole('alert')).toBeNull()
    // Nothing half-granted: no agent user was added for the refused name.
    expect((await getUsers(client, {})).users.length).toBe(usersBefore)
    expect(await axeViolations()).toEqual([])

    await user.clear(name)
    await user.type(name, 'Second agent')
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))
    expect(await screen.findByText('Second agent has an allowance now.')).toBeTruthy()
  })

  it('takes a key given by the app, and speaks Arabic right to left', async () => {
    const { client, render } = await signedInClient()
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const { publicKey } = await agent.keyStore.create({ scope: 'agent' })
    const user = userEvent.setup()
    const { container } = render(
      <AgentAllowance caip2="eip155:8453" agentPublicKey={publicKey} locale="ar" />,
    )
    expect(await screen.findByText('لا يملك أي وكيل مخصصًا.')).toBeTruthy()
    expect(container.querySelector('.lk-card')?.getAttribute('dir')).toBe('rtl')
    await user.click(screen.getByRole('button', { name: 'منح مخصص' }))
    expect(await screen.findByText(publicKey)).toBeTruthy()
    expect(screen.queryByRole('textbox', { name: 'المفتاح العام للوكيل' })).toBeNull()
    await user.type(screen.getByRole('textbox', { name: 'اسم الوكيل' }), 'وكيل')
    await user.type(screen.getByRole('textbox', { name: 'المبلغ (ETH)' }), '0.5')
    await user.selectOptions(screen.getByRole('combobox', { name: 'لكل' }), 'PERIOD_WEEK')
    await user.click(within(screen.getByRole('form')).getByRole('button', { name: 'منح مخصص' }))
    expect(await screen.findByText('يتبقى 0.5 ETH هذا الأسبوع')).toBeTruthy()
    expect(screen.getByText('أي عنوان')).toBeTruthy()
    expect(await axeViolations()).toEqual([])
  })

  it('under MFA: the grant asks for a code, then the next one, and is granted; so does the revoke', async () => {
    // The service's clock, moved a 30 s step ahead for each fresh TOTP code (a code proves one step, once).
    let offsetMs = 0
    const now = () => Date.now() + offsetMs
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient({ clock: { now } } as never)
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const { factorId, secret } = await createTotpFactor(client, { factorName: 'Phone' })
    await confirmTotpFactor(client, { factorId, code: totpCode(secret, now()) })
    await createMfaPolicy(client, {
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 0,
    })
    const agent = createLatchkey({ ...client.config, storage: null })
    await agent.hydrate()
    const agentKey = await agent.keyStore.create({ scope: session.organizationId })

    render(<AgentAllowance caip2="eip155:8453" />)
    await user.click(await screen.findByRole('button', { name: 'Grant an allowance' }))
    await user.type(await screen.findByRole('textbox', { name: 'Agent name' }), 'Shopping agent')
    await user.type(screen.getByRole('textbox', { name: 'Agent public key' }), agentKey.publicKey)
    await user.type(screen.getByRole('textbox', { name: 'Amount (ETH)' }), '0.01')
    const form = screen.getByRole('form', { name: 'Grant an allowance' })
    await user.click(within(form).getByRole('button', { name: 'Grant an allowance' }))

    // The first step (the agent's user and key) waits: the step-up replaces the form, its field focused.
    const field = await screen.findByRole('textbox', { name: 'Authenticator code' })
    await waitFor(() => expect(document.activeElement).toBe(field))
    expect(screen.queryByRole('form', { name: 'Grant an allowance' })).toBeNull()
    expect(screen.queryByRole('alert')).toBeNull()
    expect(await axeViolations()).toEqual([])
    offsetMs = 30_000
    await user.type(field, totpCode(secret, now()))
    await user.click(screen.getByRole('button', { name: 'Verify' }))

    // The grant goes on to its policy, which waits too: the step-up asks for the next code.
    expect(await screen.findByText(/^One more step: enter the next code from your app/)).toBeTruthy()
    const next = screen.getByRole('textbox', { name: 'Authenticator code' })
    await waitFor(() => expect(document.activeElement).toBe(next))
    expect((next as HTMLInputElement).value).toBe('')
    expect(await axeViolations()).toEqual([])
    offsetMs = 60_000
    await user.type(next, totpCode(secret, now()))
    await user.click(screen.getByRole('button', { name: 'Verify' }))

    // Granted, as without MFA: the notice, the allowance listed, focus back on the grant button.
    expect(await screen.findByText('Shopping agent has an allowance now.')).toBeTruthy()
    expect(await screen.findByText('0.01 ETH left today')).toBeTruthy()
    expect(screen.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull()
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Grant an allowance' })),
    )
    expect(await axeViolations()).toEqual([])
    await signInAgent(client, agent, {
      publicKey: agentKey.publicKey,
      organizationId: session.organizationId,
      userName: 'Shopping agent',
    })
    await signTransaction(agent, {
      signWith: addresses[0] as string,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: tx(4_000_000_000_000_000n),
    })

    // The revoke waits (deleting the agent's user); cancelling puts focus back on its Revoke.
    const revokeButton = screen.getByRole('button', { name: 'Revoke the allowance of Shopping agent' })
    await user.click(revokeButton)
    await user.click(await screen.findByRole('button', { name: 'Yes, revoke' }))
    const revokeField = await screen.findByRole('textbox', { name: 'Authenticator code' })
    await waitFor(() => expect(document.activeElement).toBe(revokeField))
    await user.keyboard('{Escape}')
    await waitFor(() => expect(screen.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull())
    await waitFor(() =>
      expect(document.activeElement).toBe(
        screen.getByRole('button', { name: 'Revoke the allowance of Shopping agent' }),
      ),
    )
    // Run again (a revoke can be), and proven this time: the agent's user goes, then the revoke
    // waits again (deleting the agent's policy) and asks for the next code.
    await user.click(screen.getByRole('button', { name: 'Revoke the allowance of Shopping agent' }))
    await user.click(await screen.findByRole('button', { name: 'Yes, revoke' }))
    offsetMs = 90_000
    await user.type(
      await screen.findByRole('textbox', { name: 'Authenticator code' }),
      totpCode(secret, now()),
    )
    await user.click(screen.getByRole('button', { name: 'Verify' }))
    expect(await screen.findByText(/^One more step: enter the next code from your app/)).toBeTruthy()
    const nextRevokeField = screen.getByRole('textbox', { name: 'Authenticator code' })
    await waitFor(() => expect(document.activeElement).toBe(nextRevokeField))
    offsetMs = 120_000
    await user.type(nextRevokeField, totpCode(secret, now()))
    await user.click(screen.getByRole('button', { name: 'Verify' }))
    expect(
      await screen.findByText('The allowance of Shopping agent is revoked. Its key can no longer sign.'),
    ).toBeTruthy()
    expect(await screen.findByText('No agent has an allowance.')).toBeTruthy()
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Grant an allowance' })),
    )
    expect(await axeViolations()).toEqual([])
  })
})

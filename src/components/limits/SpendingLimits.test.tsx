import { unsignedTransfer } from '@latchkey/service/testing'
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import axe from 'axe-core'
import { describe, expect, it } from 'vitest'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createSpendingLimit } from '../../core/actions/activities/createSpendingLimit.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { signTransaction } from '../../core/actions/activities/signTransaction.ts'
import { getSpendingLimits } from '../../core/actions/queries/getSpendingLimits.ts'
import { getUsers } from '../../core/actions/queries/getUsers.ts'
import { SpendingLimitExceededError } from '../../core/errors.ts'
import { latestCode, signedInClient } from '../test/renderWithService.tsx'
import { SpendingLimits } from './SpendingLimits.tsx'

const SHOP = '0x00000000000000000000000000000000000f00d5'
const ETH = 10n ** 18n

async function axeViolations() {
  const result = await axe.run(document.body, {
    resultTypes: ['violations'],
    rules: { 'color-contrast': { enabled: false }, region: { enabled: false } },
  })
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

let nonce = 0
/** Signs a transfer of `wei` on Base from `from` (the signed-in user's key), paying no fee: the limit counts its value alone. */
const pay = (client: Parameters<typeof signTransaction>[0], from: string, wei: bigint) =>
  signTransaction(client, {
    signWith: from,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: unsignedTransfer({
      to: SHOP,
      value: wei,
      nonce: nonce++,
      chainId: 8453,
      maxFeePerGas: 0n,
    }),
  })

const rows = () => screen.queryAllByRole('listitem')

/** An MFA policy holding every change of a limit for a code e-mailed to the user. */
const holdChangesForAnEmailedCode = (client: Parameters<typeof createMfaPolicy>[0]) =>
  createMfaPolicy(client, {
    mfaPolicyName: 'an e-mailed code to change a limit',
    condition: "activity.type == 'ACTIVITY_TYPE_LATCHKEY_UPDATE_SPENDING_LIMIT'",
    requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }],
    order: 0,
  })

describe('<SpendingLimits/>', () => {
  it('sets a limit on the whole account, shows what is used and left, changes and removes it; keyboard only, focus following', async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const from = addresses[0] as string
    // A limit on an API key (an agent's, here on the user's own key, far above what this test
    // spends) is <AgentAllowance/>'s business: never listed here.
    const { users } = await getUsers(client, {})
    await createSpendingLimit(client, {
      spendingLimitName: 'Some key',
      scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId: users[0]!.apiKeys[0]!.apiKeyId },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
      amount: (1000n * ETH).toString(),
    })
    const view = render(<SpendingLimits caip2="eip155:8453" />)
    expect(await screen.findByText('No spending limit is set.')).toBeTruthy()
    expect(screen.queryByText('Some key')).toBeNull()
    expect(await axeViolations()).toEqual([])

    // Keyboard only: "Set a limit" opens the form with focus in the amount; a bad amount says so
    // and keeps the focus there; Escape goes back to the button.
    const add = screen.getByRole('button', { name: 'Set a limit' })
    add.focus()
    await user.keyboard('{Enter}')
    const amount = await screen.findByRole('textbox', { name: 'Amount (ETH)' })
    await waitFor(() => expect(document.activeElement).toBe(amount))
    expect(screen.getByRole('combobox', { name: 'Applies to' })).toBeTruthy()
    await user.keyboard('0.0000000000000000001{Enter}')
    expect(await screen.findByText('Enter an amount above 0 with at most 18 decimals.')).toBeTruthy()
    expect(document.activeElement).toBe(amount)
    // A thousand to some, one to others: asked, never guessed. Too large: said so, not "decimals".
    await user.clear(amount)
    await user.keyboard('1,000{Enter}')
    expect(
      await screen.findByText(
        '“1,000” could be 1000 or 1.000. Write the amount without a thousands separator.',
      ),
    ).toBeTruthy()
    expect(document.activeElement).toBe(amount)
    // Edited, the amount drops its error until the next submit.
    await user.clear(amount)
    expect(screen.queryByText(/could be 1000 or 1\.000/)).toBeNull()
    await user.keyboard(`${'9'.repeat(80)}{Enter}`)
    expect(await screen.findByText('This amount is too large. Enter a smaller one.')).toBeTruthy()
    expect(document.activeElement).toBe(amount)
    expect(await axeViolations()).toEqual([])
    await user.keyboard('{Escape}')
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Set a limit' })),
    )

    // 1 ETH a day on every account of the user.
    await user.keyboard('{Enter}')
    await user.type(await screen.findByRole('textbox', { name: 'Amount (ETH)' }), '1{Enter}')
    const created = await screen.findByText('The limit is set.')
    await waitFor(() => expect(document.activeElement).toBe(created))
    // On screen the amount holds to its unit (a no-break space); the name kept has a plain one.
    expect((await screen.findByText('1 ETH left today')).textContent).toBe('1\u00a0ETH left today')
    expect(screen.getByText('Daily limit of 1 ETH')).toBeTruthy()
    expect(screen.getByText('All my accounts')).toBeTruthy()
    const [limit] = (await getSpendingLimits(client, {})).spendingLimits.filter(
      (l) => l.scope.type === 'SPENDING_LIMIT_SCOPE_USER',
    )
    expect(limit).toMatchObject({
      scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: session.userId },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
      amount: ETH.toString(),
      spendingLimitName: 'Daily limit of 1 ETH',
    })

    // 0.65 ETH signed: 0.35 ETH left, and when it frees; more than that is refused.
    await pay(client, from, (65n * ETH) / 100n)
    await expect(pay(client, from, ETH / 2n)).rejects.toBeInstanceOf(SpendingLimitExceededError)
    view.unmount()
    render(<SpendingLimits caip2="eip155:8453" />)
    expect(await screen.findByText('0.35 ETH left today')).toBeTruthy()
    expect(screen.getByText('0.65 ETH of 1 ETH')).toBeTruthy()
    // Tomorrow: the date too, not a bare clock time that reads as a moment ago.
    expect(screen.getByText(/^· frees at [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}/)).toBeTruthy()

    // Raise it to 2 ETH: the form starts at the current amount; Escape puts focus back on Change.
    const change = screen.getByRole('button', { name: 'Change Daily limit of 1 ETH' })
    await user.click(change)
    const field = await screen.findByRole('textbox', { name: 'Amount (ETH)' })
    expect((field as HTMLInputElement).value).toBe('1')
    await user.keyboard('{Escape}')
    await waitFor(() =>
      expect(document.activeElement).toBe(
        screen.getByRole('button', { name: 'Change Daily limit of 1 ETH' }),
      ),
    )
    await user.keyboard('{Enter}')
    const again = await screen.findByRole('textbox', { name: 'Amount (ETH)' })
    await user.clear(again)
    await user.type(again, '2{Enter}')
    // The notice names the limit as it is now (its name follows its amount).
    expect(await screen.findByText('Daily limit of 2 ETH is changed.')).toBeTruthy()
    expect(await screen.findByText('1.35 ETH left today')).toBeTruthy()
    // Its name was the one its amount gave it: renamed with the amount.
    expect(screen.getByText('Daily limit of 2 ETH')).toBeTruthy()
    await expect(pay(client, from, ETH / 2n)).resolves.toBeTruthy()

    // Remove: asked first ("Yes" takes the focus, Escape goes back), then gone.
    await user.click(screen.getByRole('button', { name: 'Remove Daily limit of 2 ETH' }))
    const yes = await screen.findByRole('button', { name: 'Yes, remove' })
    await waitFor(() => expect(document.activeElement).toBe(yes))
    expect(screen.getByText(/Nothing will cap this spending any more/)).toBeTruthy()
    expect(await axeViolations()).toEqual([])
    await user.keyboard('{Escape}')
    await waitFor(() =>
      expect(document.activeElement).toBe(
        screen.getByRole('button', { name: 'Remove Daily limit of 2 ETH' }),
      ),
    )
    await user.keyboard('{Enter}')
    await user.click(await screen.findByRole('button', { name: 'Yes, remove' }))
    const removed = await screen.findByText('Daily limit of 2 ETH is removed.')
    await waitFor(() => expect(document.activeElement).toBe(removed))
    expect(await screen.findByText('No spending limit is set.')).toBeTruthy()
    await expect(pay(client, from, 5n * ETH)).resolves.toBeTruthy()
  })

  it('a raise an MFA policy holds waits for the e-mailed code, then is made once', async () => {
    const user = userEvent.setup()
    const { client, render, service } = await signedInClient({}, 'rosa@example.com')
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const { spendingLimitId } = await createSpendingLimit(client, {
      spendingLimitName: 'Main account, weekly',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: addresses[0] as string },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_WEEK' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
      amount: ETH.toString(),
    })
    await holdChangesForAnEmailedCode(client)
    render(<SpendingLimits caip2="eip155:8453" />)
    expect(await screen.findByText('1 ETH left this week')).toBeTruthy()
    expect(screen.getByText(new RegExp(`^${addresses[0]}$`, 'i'))).toBeTruthy()

    await user.click(screen.getByRole('button', { name: 'Change Main account, weekly' }))
    const field = await screen.findByRole('textbox', { name: 'Amount (ETH)' })
    await user.clear(field)
    await user.type(field, '10{Enter}')
    const send = await screen.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(send))
    // Held, not made: the limit is still 1 ETH.
    const amountOf = async () =>
      (await getSpendingLimits(client, {})).spendingLimits.find((l) => l.spendingLimitId === spendingLimitId)
        ?.amount
    expect(await amountOf()).toBe(ETH.toString())
    await user.keyboard('{Enter}')
    const code = await screen.findByRole('textbox', { name: 'Code from the message' })
    await user.type(code, `${await latestCode(service, 'rosa@example.com')}{Enter}`)
    expect(await screen.findByText('Main account, weekly is changed.', {}, { timeout: 10_000 })).toBeTruthy()
    expect(await screen.findByText('10 ETH left this week')).toBeTruthy()
    expect(await amountOf()).toBe((10n * ETH).toString())
    expect(await axeViolations()).toEqual([])
  })

  it('Escape or Cancel on the step-up of a change puts focus back on the row’s Change, the limit unchanged', async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient({}, 'noor@example.com')
    await createSpendingLimit(client, {
      spendingLimitName: 'Daily',
      scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: session.userId },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
      amount: ETH.toString(),
    })
    await holdChangesForAnEmailedCode(client)
    render(<SpendingLimits caip2="eip155:8453" />)
    const change = await screen.findByRole('button', { name: 'Change Daily' })
    await user.click(change)
    const field = await screen.findByRole('textbox', { name: 'Amount (ETH)' })
    await user.clear(field)
    await user.type(field, '10{Enter}')
    // Escape, as in the form before it…
    const offer = await screen.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(offer))
    await user.keyboard('{Escape}')
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Change Daily' })),
    )
    expect(screen.queryByRole('button', { name: 'Email me a code' })).toBeNull()
    // …or Cancel.
    await user.keyboard('{Enter}')
    await user.clear(await screen.findByRole('textbox', { name: 'Amount (ETH)' }))
    await user.keyboard('10{Enter}')
    await screen.findByRole('button', { name: 'Email me a code' }, { timeout: 10_000 })
    await user.click(screen.getByRole('button', { name: 'Cancel' }))
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Change Daily' })),
    )
    expect(screen.getByText('1 ETH left today')).toBeTruthy()
    expect(await axeViolations()).toEqual([])
  })

  it('shows an SPL token limit in its units, and changes it in units', async () => {
    const user = userEvent.setup()
    const { client, session, render } = await signedInClient()
    await createSpendingLimit(client, {
      spendingLimitName: 'USDC',
      scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId: session.userId },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: {
        type: 'SPENDING_LIMIT_ASSET_SPL',
        caip2: 'solana:mainnet',
        mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      },
      amount: '250',
    })
    render(<SpendingLimits caip2="solana:mainnet" />)
    expect(await screen.findByText('250 units left today')).toBeTruthy()
    await user.click(screen.getByRole('button', { name: 'Change USDC' }))
    const amount = await screen.findByRole('textbox', { name: 'Amount (units)' })
    expect((amount as HTMLInputElement).value).toBe('250')
    await user.clear(amount)
    await user.type(amount, '300{Enter}')
    expect(await screen.findByText('300 units left today')).toBeTruthy()
    expect(await axeViolations()).toEqual([])
  })

  it('tells two limits of one name apart in their buttons’ names, by what each applies to', async () => {
    const { client, session, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const address = addresses[0] as string
    for (const scope of [
      { type: 'SPENDING_LIMIT_SCOPE_USER', userId: session.userId },
      { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address },
    ] as const)
      await createSpendingLimit(client, {
        spendingLimitName: 'Daily limit of 1 ETH',
        scope,
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:8453' },
        amount: ETH.toString(),
      })
    render(<SpendingLimits caip2="eip155:8453" />)
    // The service keeps an EVM address lower-case.
    const short = `${address.slice(0, 6)}…${address.slice(-4)}`.toLowerCase()
    expect(
      await screen.findByRole('button', { name: 'Change Daily limit of 1 ETH (All my accounts)' }),
    ).toBeTruthy()
    expect(screen.getByRole('button', { name: `Change Daily limit of 1 ETH (${short})` })).toBeTruthy()
    expect(screen.getByRole('button', { name: `Remove Daily limit of 1 ETH (${short})` })).toBeTruthy()
    expect(screen.getAllByText('Daily limit of 1 ETH')).toHaveLength(2)
  })

  it('in Spanish writes and reads amounts with a decimal comma, and a change keeps its amount as it was', async () => {
    const user = userEvent.setup()
    const { client, render } = await signedInClient()
    render(<SpendingLimits caip2="eip155:8453" locale="es" />)
    await user.click(await screen.findByRole('button', { name: 'Fijar un límite' }))
    // 1,234 ETH in Spanish is 1.234 ETH (a point would be a thousands separator there).
    await user.type(await screen.findByRole('textbox', { name: 'Importe (ETH)' }), '1,234{Enter}')
    expect(await screen.findByText('Quedan 1,234 ETH hoy')).toBeTruthy()
    expect(screen.getByText('Límite diario de 1,234 ETH')).toBeTruthy()
    const amountOf = async () => (await getSpendingLimits(client, {})).spendingLimits[0]?.amount
    expect(await amountOf()).toBe(((1234n * ETH) / 1000n).toString())
    // "Cambiar" starts at 1,234: sent as it is, it is taken as it is (`1.234` was refused as a
    // thousand or one).
    await user.click(screen.getByRole('button', { name: 'Cambiar Límite diario de 1,234 ETH' }))
    const amount = await screen.findByRole('textbox', { name: 'Importe (ETH)' })
    expect((amount as HTMLInputElement).value).toBe('1,234')
    await user.keyboard('{Enter}')
    expect(await screen.findByText('Límite diario de 1,234 ETH está cambiado.')).toBeTruthy()
    expect(await amountOf()).toBe(((1234n * ETH) / 1000n).toString())
  })

  it('speaks Arabic right to left, and sets a limit on one wallet account', async () => {
    const user = userEvent.setup()
    const { client, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const { container } = render(<SpendingLimits caip2="eip155:8453" locale="ar" />)
    expect(await screen.findByText('لم يُعيَّن أي حد للإنفاق.')).toBeTruthy()
    expect(container.querySelector('.lk-card')?.getAttribute('dir')).toBe('rtl')
    await user.click(screen.getByRole('button', { name: 'تعيين حد' }))
    await user.type(await screen.findByRole('textbox', { name: 'المبلغ (ETH)' }), '0.5')
    await user.selectOptions(screen.getByRole('combobox', { name: 'لكل' }), 'PERIOD_WEEK')
    const scope = screen.getByRole('combobox', { name: 'ينطبق على' })
    await user.selectOptions(scope, within(scope).getByRole('option', { name: addresses[0] as string }))
    await user.click(within(screen.getByRole('form')).getByRole('button', { name: 'تعيين حد' }))
    expect(await screen.findByText('يتبقى 0.5 ETH هذا الأسبوع')).toBeTruthy()
    expect(rows()).toHaveLength(1)
    const [limit] = (await getSpendingLimits(client, {})).spendingLimits
    const stored = limit?.scope as { type: string; address: string } | undefined
    expect(stored?.type).toBe('SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT')
    expect(stored?.address.toLowerCase()).toBe((addresses[0] as string).toLowerCase())
    expect(limit?.window.period).toBe('PERIOD_WEEK')
    expect(await axeViolations()).toEqual([])
  })
})

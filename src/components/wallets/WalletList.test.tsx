import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { getWalletAccounts } from '../../core/actions/queries/getWalletAccounts.ts'
import { signedInClient } from '../test/renderWithService.tsx'
import { WalletList } from './WalletList.tsx'

describe('<WalletList/>', () => {
  it('creates a wallet, adds an account by chain and deletes it after confirmation', async () => {
    const user = userEvent.setup()
    const { client, render } = await signedInClient()
    render(<WalletList />)
    expect(await screen.findByText('No wallets yet')).toBeTruthy()

    await user.click(screen.getByRole('button', { name: 'Create wallet' }))
    await user.clear(screen.getByRole('textbox', { name: 'Wallet name' }))
    await user.type(screen.getByRole('textbox', { name: 'Wallet name' }), 'Everyday')
    expect(screen.getByRole('checkbox', { name: 'Ethereum' })).toHaveProperty('checked', true)
    expect(screen.getByRole('checkbox', { name: 'Solana' })).toHaveProperty('checked', true)
    await user.click(screen.getAllByRole('button', { name: 'Create wallet' }).at(-1)!)

    const list = await screen.findByRole('list', { name: 'Accounts of Everyday' }, { timeout: 10_000 })
    const { accounts } = await getWalletAccounts(client, {})
    const shown = () =>
      within(list)
        .getAllByRole('button', { name: /^Copy address / })
        .map((b) => b.getAttribute('aria-label')!.replace('Copy address ', ''))
    expect(shown()).toEqual(accounts.map((a) => a.address))
    expect(accounts.map((a) => a.addressFormat)).toEqual(['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_SOLANA'])

    await user.selectOptions(screen.getByRole('combobox', { name: 'Add an account on' }), 'bitcoin')
    await user.click(screen.getByRole('button', { name: 'Add account' }))
    await waitFor(() => expect(shown()).toHaveLength(3), { timeout: 10_000 })
    expect(shown()[2]).toMatch(/^bc1q/)

    await user.click(screen.getByRole('button', { name: 'Delete wallet: Everyday' }))
    expect(screen.getByText('Delete “Everyday”?')).toBeTruthy()
    const confirm = screen.getAllByRole('button', { name: 'Delete wallet' }).at(-1)!
    expect(confirm).toHaveProperty('disabled', true)
    await user.click(screen.getByRole('checkbox', { name: 'I understand this can’t be undone' }))
    await user.click(confirm)
    expect(await screen.findByText('No wallets yet', undefined, { timeout: 10_000 })).toBeTruthy()
  })

  it('hides every control when read-only', async () => {
    const { render } = await signedInClient()
    render(<WalletList readOnly />)
    expect(await screen.findByText('No wallets yet')).toBeTruthy()
    expect(screen.queryByRole('button')).toBeNull()
  })
})

import { HDKey } from '@scure/bip32'
import { generateMnemonic, mnemonicToSeedSync } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { addr } from 'micro-eth-signer'
import { expect, expectFitsPhone, expectNoAxeViolations, test } from './fixtures.ts'
import { addressesOf, createWallet, signInWithEmail, walletsCard } from './flows.ts'

/** The first Ethereum address of a mnemonic (m/44'/60'/0'/0/0), derived independently of Latchkey. */
function ethereumAddressOf(mnemonic: string): string {
  const key = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive("m/44'/60'/0'/0/0")
  return addr.fromPrivateKey(key.privateKey!)
}

test('export: the revealed recovery phrase and private key re-derive the shown address', async ({ page }) => {
  await signInWithEmail(page)
  const wallet = await createWallet(page, 'Savings')
  const [address] = await addressesOf(wallet, 'Ethereum')
  const backup = page.getByRole('region', { name: 'Back up and restore' })

  await backup.getByRole('button', { name: 'Export recovery phrase' }).click()
  const dialog = page.getByRole('dialog', { name: 'Export wallet' })
  await expect(dialog.getByText('Keep this secret')).toBeVisible()
  await expectNoAxeViolations(page, 'export warning')
  const reveal = dialog.getByRole('button', { name: 'Reveal recovery phrase' })
  await expect(reveal).toBeDisabled()
  await dialog.getByLabel('I understand and I’m in a private place').check()
  await reveal.click()
  const frame = page.frameLocator('iframe[title="Your recovery phrase, in a secure frame"]')
  const words = frame.getByRole('list', { name: 'recovery phrase' }).getByRole('listitem')
  await expect(words).toHaveCount(12, { timeout: 20_000 })
  const mnemonic = (await words.allTextContents()).map((w) => w.trim()).join(' ')
  expect(ethereumAddressOf(mnemonic).toLowerCase()).toBe(address!.toLowerCase())
  // The phrase lives in a frame of the service's origin: the app's own scripts cannot read it.
  const readable = await page.evaluate(() => {
    const iframe = document.querySelector<HTMLIFrameElement>(
      'iframe[title="Your recovery phrase, in a secure frame"]',
    )
    try {
      return iframe?.contentDocument?.body?.textContent ?? null
    } catch {
      return null
    }
  })
  expect(readable).toBeNull()
  await dialog.getByRole('button', { name: 'Done' }).click()
  await expect(wallet.getByText('Backed up')).toBeVisible()

  await backup.getByRole('button', { name: 'Export private key' }).click()
  const keyDialog = page.getByRole('dialog', { name: 'Export private key' })
  await keyDialog.getByLabel('I understand and I’m in a private place').check()
  await keyDialog.getByRole('button', { name: 'Reveal private key' }).click()
  const key = page.frameLocator('iframe[title="Your private key, in a secure frame"]').locator('code')
  await expect(key).toHaveText(/^(0x)?[0-9a-f]{64}$/, { timeout: 20_000 })
  expect(addr.fromPrivateKey((await key.textContent())!.trim()).toLowerCase()).toBe(address!.toLowerCase())
  await keyDialog.getByRole('button', { name: 'Done' }).click()
  await expectFitsPhone(page, 'the backup page after the test')
})

test('import: a recovery phrase typed in the secure frame yields the addresses it derives', async ({
  page,
}) => {
  await signInWithEmail(page)
  const mnemonic = generateMnemonic(wordlist)
  const backup = page.getByRole('region', { name: 'Back up and restore' })
  await backup.getByRole('button', { name: 'Import wallet' }).click()
  const dialog = page.getByRole('dialog', { name: 'Import wallet' })
  await dialog.getByLabel('Wallet name').fill('Restored')
  const frame = page.frameLocator('iframe[title="Recovery phrase, in a secure frame"]')
  await frame.getByLabel('recovery phrase').fill(mnemonic)
  await expectNoAxeViolations(page, 'import')
  await dialog.getByRole('button', { name: 'Import wallet' }).click()
  await expect(page.getByRole('dialog', { name: 'Wallet imported' })).toBeVisible({ timeout: 20_000 })
  await page.getByRole('dialog', { name: 'Wallet imported' }).getByRole('button', { name: 'Done' }).click()

  const wallet = walletsCard(page).getByRole('article', { name: 'Restored' })
  await expect(wallet.getByText('Imported')).toBeVisible()
  const [address] = await addressesOf(wallet, 'Ethereum')
  expect(address!.toLowerCase()).toBe(ethereumAddressOf(mnemonic).toLowerCase())
  await expectFitsPhone(page, 'the app page with the imported wallet')
})

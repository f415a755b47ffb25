import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { keccak256, serializeTransaction, toPrefixedMessage } from 'viem'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { confirmTotpFactor } from '../../core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createTotpFactor } from '../../core/actions/activities/createTotpFactor.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { signMessage } from '../../core/actions/activities/signMessage.ts'
import {
  type SignRawPayloadsParameters,
  signRawPayloads,
} from '../../core/actions/activities/signRawPayloads.ts'
import { signTransaction } from '../../core/actions/activities/signTransaction.ts'
import { signTypedData } from '../../core/actions/activities/signTypedData.ts'
import { addPasskey } from '../../core/actions/auth/addPasskey.ts'
import { getMfaFactors } from '../../core/actions/queries/getMfaFactors.ts'
import { getMfaPolicies } from '../../core/actions/queries/getMfaPolicies.ts'
import { totpCode } from '../../core/test/totpCode.ts'
import { typedUnits, unitsOf } from '../limits/allowance.ts'
import { installSoftAuthenticator, signedInClient } from '../test/renderWithService.tsx'
import { EXPORTS_POLICY, SENDS_METHODS, SENDS_POLICY, sendsCondition, thresholdOf } from './rules.ts'
import { SecuritySettings } from './SecuritySettings.tsx'

afterEach(() => vi.restoreAllMocks())

/** Codes no TOTP window around now accepts. */
const wrongCode = (secret: string) => {
  const now = Date.now()
  const valid = new Set([-30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)))
  return ['111111', '222222', '333333', '444444', '555555'].find((c) => !valid.has(c))!
}

describe('<SecuritySettings/>', () => {
  it('enrols an authenticator app: QR code and otpauth link, a wrong first code refused, the right one confirms', async () => {
    const user = userEvent.setup()
    const { render, client } = await signedInClient()
    render(<SecuritySettings />)
    await user.click(await screen.findByRole('button', { name: 'Add an authenticator app' }))

    const heading = await screen.findByRole('heading', { name: 'Scan this QR code' }, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(heading))
    const qr = screen.getByRole('img', { name: 'QR code of your authenticator app’s key' })
    expect(qr.tagName.toLowerCase()).toBe('svg')
    expect(qr.querySelector('path')?.getAttribute('d')).toMatch(/^M\d+ \d+h1v1h-1z/)
    const secret = document.querySelector('[data-lk-totp-secret]')?.textContent ?? ''
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    const link = document.querySelector('[data-lk-otpauth]')?.textContent ?? ''
    expect(link).toMatch(new RegExp(`^otpauth://totp/.*secret=${secret}`))
    expect(screen.getByRole('button', { name: 'Copy the setup link' })).toBeTruthy()

    // Keyboard only: a wrong code, focus back in the field; then the right one.
    const field = screen.getByRole('textbox', { name: 'Enter a code to finish' })
    expect(field.getAttribute('autocomplete')).toBe('one-time-code')
    await user.type(field, `${wrongCode(secret)}{Enter}`)
    expect(await screen.findByText(/That code isn’t right/)).toBeTruthy()
    await waitFor(() => expect(document.activeElement).toBe(field))
    await user.clear(field)
    await user.type(field, `${totpCode(secret)}{Enter}`)

    const notice = await screen.findByText(/Your authenticator app is on/, {}, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(notice))
    const { factors } = await getMfaFactors(client)
    expect(factors).toEqual([expect.objectContaining({ confirmed: true })])
    expect(await screen.findByRole('button', { name: /Remove the authenticator app/ })).toBeTruthy()
  })

  it('shows recovery codes once, with copy and a .txt download; the count follows', async () => {
    const user = userEvent.setup()
    const { render } = await signedInClient()
    const downloads: Blob[] = []
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => {
      downloads.push(blob as Blob)
      return 'blob:codes'
    })
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {})
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {})
    render(<SecuritySettings />)
    expect(await screen.findByText('None')).toBeTruthy()
    await user.click(screen.getByRole('button', { name: 'Create recovery codes' }))

    const heading = await screen.findByRole('heading', { name: 'Your recovery codes' })
    await waitFor(() => expect(document.activeElement).toBe(heading))
    const codes = within(screen.getByRole('list', { name: 'Your recovery codes' }))
      .getAllByRole('listitem')
      .map((item) => item.textContent)
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    expect(screen.getByRole('button', { name: 'Copy the codes' })).toBeTruthy()
    await user.click(screen.getByRole('button', { name: 'Download (.txt)' }))
    expect(downloads).toHaveLength(1)
    const text = await downloads[0]!.text()
    for (const code of codes) expect(text).toContain(code)

    await user.click(screen.getByRole('button', { name: 'I saved them' }))
    expect(await screen.findByText('10 left')).toBeTruthy()
    expect(screen.queryByText(codes[0]!)).toBeNull()
  })

  it('"exports need a second factor" is a policy; switching it off asks for the code first, removing its only factor is refused in words', async () => {
    const user = userEvent.setup()
    const { render, client } = await signedInClient()
    const { factorId, secret } = await createTotpFactor(client, { factorName: 'Phone' })
    await confirmTotpFactor(client, { factorId, code: totpCode(secret) })
    const tablet = await createTotpFactor(client, { factorName: 'Tablet' })
    await confirmTotpFactor(client, { factorId: tablet.factorId, code: totpCode(tablet.secret) })
    render(<SecuritySettings />)

    // Without a passkey, the sends rule cannot be switched on, and says why.
    const sends = await screen.findByRole('checkbox', { name: 'Sends above an amount need a passkey' })
    expect((sends as HTMLInputElement).disabled).toBe(true)
    expect(screen.getByText(/Add a passkey first/)).toBeTruthy()

    await user.click(
      screen.getByRole('checkbox', { name: 'Exporting a wallet or key needs a second factor' }),
    )
    await screen.findByText('Saved.')
    const { mfaPolicies } = await getMfaPolicies(client)
    expect(mfaPolicies.map((p) => [p.mfaPolicyName, p.condition])).toEqual([
      [EXPORTS_POLICY, "activity.action == 'EXPORT'"],
    ])
    await waitFor(() =>
      expect((screen.getByRole('checkbox', { name: /Exporting a wallet/ }) as HTMLInputElement).checked).toBe(
        true,
      ),
    )

    // Removing a factor is held by the policy: the challenge first, then it is gone.
    await user.click(screen.getByRole('button', { name: 'Remove the authenticator app Phone' }))
    const field = await screen.findByRole('textbox', { name: 'Authenticator code' }, { timeout: 10_000 })
    expect((await getMfaFactors(client)).factors).toHaveLength(2)
    await user.type(field, `${totpCode(secret, Date.now() + 30_000)}{Enter}`)
    const removed = await screen.findByText(
      'The authenticator app Phone is removed.',
      {},
      { timeout: 10_000 },
    )
    await waitFor(() => expect(document.activeElement).toBe(removed))
    expect((await getMfaFactors(client)).factors).toHaveLength(1)

    // The other is now the rule's only way to be proven (no passkey): removing it is refused at
    // once, in words, before any code is asked; it would leave the rule unprovable for good.
    await user.click(
      await screen.findByRole('button', { name: 'Remove the authenticator app Tablet' }, { timeout: 10_000 }),
    )
    expect(
      await screen.findByText(/only way left to prove one of your rules/, {}, { timeout: 10_000 }),
    ).toBeTruthy()
    expect(screen.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull()
    expect((await getMfaFactors(client)).factors).toHaveLength(1)

    // Switching the rule off waits for it too; Cancel leaves it on, with focus back on the page.
    await user.click(await screen.findByRole('checkbox', { name: /Exporting a wallet/ }, { timeout: 10_000 }))
    await user.click(await screen.findByRole('button', { name: 'Cancel' }, { timeout: 10_000 }))
    expect((await getMfaPolicies(client)).mfaPolicies).toHaveLength(1)
  })

  it("reads and shows the sends amount in the user's decimal mark, and refuses one that reads two ways", async () => {
    const authenticator = installSoftAuthenticator()
    try {
      const { client, render } = await signedInClient()
      await addPasskey(client, { authenticatorName: 'Laptop' })
      const user = userEvent.setup()
      render(<SecuritySettings locale="es" />)
      await user.click(
        await screen.findByRole(
          'checkbox',
          { name: 'Los envíos por encima de un importe requieren una llave de acceso' },
          { timeout: 10_000 },
        ),
      )
      const amount = screen.getByRole('textbox', { name: 'Importe (ETH)' }) as HTMLInputElement
      expect(amount.value).toBe('0,1')
      // The amount says that fees count.
      const hint = document.getElementById(amount.getAttribute('aria-describedby') ?? '')
      expect(hint?.textContent).toMatch(/^Las comisiones cuentan/)
      // `1.000` is a thousand in Spanish, and one in English: neither is guessed.
      await user.clear(amount)
      await user.type(amount, '1.000')
      await user.click(screen.getByRole('button', { name: 'Guardar' }))
      expect((await screen.findByRole('alert')).textContent).toBe(
        '«1.000» puede ser 1000 o 1,000. Escribe el importe sin separador de miles.',
      )
      expect(document.activeElement).toBe(amount)
      expect(amount.getAttribute('aria-invalid')).toBe('true')
      expect((await getMfaPolicies(client)).mfaPolicies).toHaveLength(0)
      await user.clear(amount)
      await user.type(amount, '0,25')
      await user.click(screen.getByRole('button', { name: 'Guardar' }))
      await screen.findByText('Guardado.', {}, { timeout: 10_000 })
      const [policy] = (await getMfaPolicies(client)).mfaPolicies
      expect(thresholdOf(policy!.condition)).toBe(250_000_000_000_000_000n)
      expect(screen.queryByRole('alert')).toBeNull()
      expect(amount.value).toBe('0,25')
    } finally {
      authenticator.uninstall()
    }
  })

  it('is right-to-left in Arabic', async () => {
    const { render } = await signedInClient()
    const { container } = render(<SecuritySettings locale="ar" />)
    expect(await screen.findByRole('heading', { name: 'الأمان' }, { timeout: 10_000 })).toBeTruthy()
    expect(container.querySelector('section')?.getAttribute('dir')).toBe('rtl')
  })
})

describe('the rules in words', () => {
  it('round-trips the threshold of a sends rule and refuses amounts that are not ETH', () => {
    const wei = unitsOf('0.1')!
    expect(wei).toBe(100_000_000_000_000_000n)
    expect(thresholdOf(sendsCondition(wei))).toBe(wei)
    expect(typedUnits(wei, 18, 'en')).toBe('0.1')
    expect(typedUnits(2n * 10n ** 18n, 18, 'en')).toBe('2')
    expect(typedUnits(wei, 18, 'es')).toBe('0,1')
    expect(thresholdOf(`${sendsCondition(wei)} || true`)).toBeUndefined()
    for (const bad of ['', '0', '-1', '1e18', '0.1234567890123456789', 'abc'])
      expect(unitsOf(bad)).toBeUndefined()
  })

  it('"sends above 0.1 ETH need a passkey" holds a 0.2 ETH transaction and lets a 0.05 ETH one through', async () => {
    const { client } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    // A passkey first: a policy only a passkey proves is refused to a user without one.
    const authenticator = installSoftAuthenticator()
    try {
      await addPasskey(client, { authenticatorName: 'Laptop' })
    } finally {
      authenticator.uninstall()
    }
    await createMfaPolicy(client, {
      mfaPolicyName: SENDS_POLICY,
      condition: sendsCondition(unitsOf('0.1')!),
      requiredAuthenticationMethods: SENDS_METHODS,
      order: 0,
    })
    const transfer = (value: bigint) =>
      serializeTransaction({
        type: 'eip1559',
        chainId: 31337,
        nonce: 0,
        maxFeePerGas: 2n * 10n ** 9n,
        maxPriorityFeePerGas: 10n ** 9n,
        gas: 21_000n,
        to: '0x000000000000000000000000000000000000dEaD',
        value,
      })
    const sign = (value: bigint) =>
      signTransaction(client, {
        signWith: addresses[0]!,
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: transfer(value),
      })
    await expect(sign(unitsOf('0.05')!)).resolves.toBeTruthy()
    await expect(sign(unitsOf('0.0999')!)).resolves.toBeTruthy()
    // Fees count: 0.1 ETH and its fee (up to 21,000 × 2 gwei) is above 0.1 ETH.
    await expect(sign(unitsOf('0.1')!)).rejects.toMatchObject({ code: 'MFA_REQUIRED' })
    await expect(sign(unitsOf('0.2')!)).rejects.toMatchObject({
      code: 'MFA_REQUIRED',
      methods: ['AUTHENTICATION_TYPE_PASSKEY'],
    })
    // The same 0.2 ETH send signed raw, as its hash or as keccak256 of its bytes, is the same
    // signature: it asks for the passkey too, whatever the amount. So does an EIP-7702 authorization.
    const unsigned = transfer(unitsOf('0.2')!)
    const raw = (parameters: Pick<SignRawPayloadsParameters, 'payloads' | 'encoding' | 'hashFunction'>) =>
      signRawPayloads(client, { signWith: addresses[0]!, ...parameters })
    const held = { code: 'MFA_REQUIRED', methods: ['AUTHENTICATION_TYPE_PASSKEY'] }
    const hex = 'PAYLOAD_ENCODING_HEXADECIMAL' as const
    await expect(
      raw({ payloads: [keccak256(unsigned)], encoding: hex, hashFunction: 'HASH_FUNCTION_NO_OP' }),
    ).rejects.toMatchObject(held)
    await expect(
      raw({ payloads: [unsigned], encoding: hex, hashFunction: 'HASH_FUNCTION_KECCAK256' }),
    ).rejects.toMatchObject(held)
    // One message among them does not let a transaction through.
    await expect(
      raw({
        payloads: [toPrefixedMessage('hi'), unsigned],
        encoding: hex,
        hashFunction: 'HASH_FUNCTION_KECCAK256',
      }),
    ).rejects.toMatchObject(held)
    await expect(
      raw({
        payloads: [
          JSON.stringify({
            chainId: 31337,
            address: '0x000000000000000000000000000000000000dEaD',
            nonce: '0',
          }),
        ],
        encoding: 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      }),
    ).rejects.toMatchObject(held)
    // What can never be a transaction signs at once: a message (EIP-191) and typed data (EIP-712).
    await expect(
      signMessage(client, { signWith: addresses[0]!, message: 'Sign in to Example' }),
    ).resolves.toBeTruthy()
    await expect(
      signTypedData(client, {
        signWith: addresses[0]!,
        typedData: {
          types: {
            EIP712Domain: [{ name: 'name', type: 'string' }],
            Mail: [{ name: 'contents', type: 'string' }],
          },
          primaryType: 'Mail',
          domain: { name: 'Example' },
          message: { contents: 'hello' },
        },
      }),
    ).resolves.toBeTruthy()
  })

  it('"sends above 0.1 ETH need a passkey" counts a signed transaction\'s most fee with its value', async () => {
    const { client } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const authenticator = installSoftAuthenticator()
    try {
      await addPasskey(client, { authenticatorName: 'Laptop' })
    } finally {
      authenticator.uninstall()
    }
    await createMfaPolicy(client, {
      mfaPolicyName: SENDS_POLICY,
      condition: sendsCondition(unitsOf('0.1')!),
      requiredAuthenticationMethods: SENDS_METHODS,
      order: 0,
    })
    const gwei = 10n ** 9n
    const sign = (value: string, gas: bigint, feePerGas: bigint, type: 'eip1559' | 'legacy' = 'eip1559') =>
      signTransaction(client, {
        signWith: addresses[0]!,
        type: 'TRANSACTION_TYPE_ETHEREUM',
        unsignedTransaction: serializeTransaction({
          chainId: 1,
          nonce: 0,
          gas,
          to: '0x000000000000000000000000000000000000dEaD',
          value: unitsOf(value) ?? 0n,
          ...(type === 'legacy'
            ? { type, gasPrice: feePerGas }
            : { type, maxFeePerGas: feePerGas, maxPriorityFeePerGas: feePerGas }),
        }),
      })
    const held = { code: 'MFA_REQUIRED', methods: ['AUTHENTICATION_TYPE_PASSKEY'] }
    // Control: 0.2 ETH of value is held.
    await expect(sign('0.2', 21_000n, gwei)).rejects.toMatchObject(held)
    // Value 0, 1,000,000 gas at 1,000 gwei, all of it a tip to the block's producer: up to 1 ETH
    // leaves the account as fee. Held, as a transaction type or a fee field of either kind.
    await expect(sign('0', 1_000_000n, 1_000n * gwei)).rejects.toMatchObject(held)
    await expect(sign('0', 1_000_000n, 1_000n * gwei, 'legacy')).rejects.toMatchObject(held)
    // Value and fee each under the amount, their sum over it: 0.09 ETH and up to 0.021 ETH.
    await expect(sign('0.09', 21_000n, 1_000n * gwei)).rejects.toMatchObject(held)
    // What costs at most 0.1 ETH signs at once: a transfer at an ordinary price, a contract call
    // of value 0 whose most fee is 0.09 ETH, a legacy transfer.
    await expect(sign('0.05', 21_000n, 50n * gwei)).resolves.toBeTruthy()
    await expect(sign('0', 1_000_000n, 90n * gwei)).resolves.toBeTruthy()
    await expect(sign('0.05', 21_000n, 50n * gwei, 'legacy')).resolves.toBeTruthy()
  })

  it('a sends rule saved before raw signatures counted is still read, and saving its amount writes the current one', () => {
    const wei = unitsOf('0.1')!
    const earlier = `activity.type in ['ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'] && eth.tx.value > ${wei}`
    expect(thresholdOf(earlier)).toBe(wei)
    // And one saved before typed data and fees counted.
    const withRaw = `(${earlier}) || (activity.type in ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS'] && !(activity.params.encoding == 'PAYLOAD_ENCODING_EIP712' || activity.params.hashFunction == 'HASH_FUNCTION_SHA256' || (activity.params.hashFunction == 'HASH_FUNCTION_NOT_APPLICABLE' && activity.params.encoding != 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') || (activity.params.hashFunction == 'HASH_FUNCTION_KECCAK256' && activity.params.encoding == 'PAYLOAD_ENCODING_HEXADECIMAL' && (activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && (activity.params.payload[0..4] == '0x19' || activity.params.payload[0..2] == '19') || activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS' && activity.params.payloads.all(p, p[0..4] == '0x19' || p[0..2] == '19')))))`
    expect(thresholdOf(withRaw)).toBe(wei)
    // And one saved with typed data and fees, before a call to the account itself, a Solana send
    // and SHA-256 and ed25519 raw signatures counted (c6cedd2e).
    const withFees = `(activity.type in ['ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION'] && eth.tx.value > 100000000000000000) || (activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' && !([['eip1559', 'max_fee_per_gas'], ['eip7702', 'max_fee_per_gas'], ['legacy', 'gas_price'], ['eip2930', 'gas_price']].any(k, k[0] == eth.tx.type && [eth.tx[k[1]]].all(f, eth.tx.value <= 99900000000000000 && (eth.tx.gas <= 21000 && f <= 4761904761 || eth.tx.gas <= 100000 && f <= 1000000000 || eth.tx.gas <= 1000000 && f <= 100000000 || eth.tx.gas <= 30000000 && f <= 3333333) || eth.tx.value <= 99000000000000000 && (eth.tx.gas <= 21000 && f <= 47619047619 || eth.tx.gas <= 100000 && f <= 10000000000 || eth.tx.gas <= 1000000 && f <= 1000000000 || eth.tx.gas <= 30000000 && f <= 33333333) || eth.tx.value <= 90000000000000000 && (eth.tx.gas <= 21000 && f <= 476190476190 || eth.tx.gas <= 100000 && f <= 100000000000 || eth.tx.gas <= 1000000 && f <= 10000000000 || eth.tx.gas <= 30000000 && f <= 333333333) || eth.tx.value <= 0 && (eth.tx.gas <= 21000 && f <= 4761904761904 || eth.tx.gas <= 100000 && f <= 1000000000000 || eth.tx.gas <= 1000000 && f <= 100000000000 || eth.tx.gas <= 30000000 && f <= 3333333333))))) || (activity.type in ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS'] && !((activity.params.encoding == 'PAYLOAD_ENCODING_EIP712' && eth.eip_712.primary_type != 'BatchExecution') || (activity.params.encoding in ['PAYLOAD_ENCODING_HEXADECIMAL', 'PAYLOAD_ENCODING_TEXT_UTF8'] && activity.params.hashFunction in ['HASH_FUNCTION_SHA256', 'HASH_FUNCTION_NOT_APPLICABLE']) || (activity.params.hashFunction == 'HASH_FUNCTION_KECCAK256' && activity.params.encoding == 'PAYLOAD_ENCODING_HEXADECIMAL' && (activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && (activity.params.payload[0..4] == '0x19' && activity.params.payload[4..6] != '01' || activity.params.payload[0..2] == '19' && activity.params.payload[2..4] != '01') || activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS' && activity.params.payloads.all(p, p[0..4] == '0x19' && p[4..6] != '01' || p[0..2] == '19' && p[2..4] != '01')))))`
    expect(thresholdOf(withFees)).toBe(wei)
    expect(sendsCondition(wei)).not.toBe(earlier)
    expect(sendsCondition(wei)).not.toBe(withRaw)
    expect(sendsCondition(wei)).not.toBe(withFees)
    expect(sendsCondition(wei).length).toBeLessThan(4096)
  })
})

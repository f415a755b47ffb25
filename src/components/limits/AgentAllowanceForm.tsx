import type { SpendingLimitPeriod } from '@latchkey/protocol'
import { type FormEvent, useEffect, useId, useRef, useState } from 'react'
import type { GrantAgentAllowanceReturnType } from '../../core/actions/activities/grantAgentAllowance.ts'
import type { MfaRequiredError } from '../../core/errors.ts'
import { useGrantAgentAllowance } from '../../react/index.ts'
import { Alert } from '../ui/Alert.tsx'
import { ErrorText } from '../ui/ErrorText.tsx'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { Button } from '../ui/parts.tsx'
import type { Ui } from '../ui/useUi.ts'
import { checkAmount, type FieldError, nativeOf, unitsOf } from './allowance.ts'
import { LimitFields } from './LimitFields.tsx'
import type { LimitsKey } from './limitsStrings.ts'

const KEY = /^0[23][0-9a-f]{64}$/i
const ADDRESS = /^0x[0-9a-f]{40}$/i
/** A Solana address as typed: 32 bytes in base58 (the service checks the bytes). */
const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/
const SYMBOL = /^[A-Za-z0-9.$_-]{1,11}$/

/**
 * What the form asks for on its chain: an Ethereum chain's allowance is in ETH (18 decimals) or an
 * ERC-20 token at a 0x contract; a Solana cluster's in SOL (9 decimals: lamports) or an SPL token
 * at a base58 mint, its addresses base58 and case-sensitive.
 */
export function chainOf(caip2: string) {
  const { symbol: native, decimals } = nativeOf(caip2)
  return caip2.startsWith('solana:')
    ? ({ solana: true, native, decimals, address: SOLANA_ADDRESS, tokenDecimals: '6' } as const)
    : ({ solana: false, native, decimals, address: ADDRESS, tokenDecimals: '18' } as const)
}

type Field = 'name' | 'key' | 'contract' | 'symbol' | 'decimals' | 'amount' | 'destinations'
const FIELDS: Field[] = ['name', 'key', 'contract', 'symbol', 'decimals', 'amount', 'destinations']

/** The form's token fields, when the allowance is in an ERC-20 token rather than ETH. */
export interface TokenFields {
  contract: string
  symbol: string
  decimals: string
}

/** `decimals` as typed, when it is a whole number from 0 to 36. */
const decimalsOf = (text: string) =>
  /^\d{1,2}$/.test(text.trim()) && Number(text) <= 36 ? Number(text) : undefined

/** What is wrong with the form, field by field (the first wrong field takes the focus). */
export function validate(
  values: {
    name: string
    key: string
    amount: string
    destinations: string
    token?: TokenFields | undefined
  },
  chain: ReturnType<typeof chainOf> = chainOf('eip155:1'),
  /** The names of the agents that already have an allowance (a second grant by one is refused). */
  takenNames: readonly string[] = [],
  /** The user's locale, whose thousands separator an amount may hold (`readAmount`). */
  locale = 'en',
) {
  const errors: Partial<Record<Field, FieldError>> = {}
  const name = values.name.trim().toLowerCase()
  if (!name) errors.name = { key: 'agentNameRequired' }
  else if (takenNames.some((taken) => taken.trim().toLowerCase() === name))
    errors.name = { key: 'agentNameTaken' }
  if (!KEY.test(values.key.trim().replace(/^0x/i, ''))) errors.key = { key: 'agentKeyInvalid' }
  const { token } = values
  let amount: ReturnType<typeof checkAmount> | undefined
  if (token) {
    if (!chain.address.test(token.contract.trim()))
      errors.contract = { key: chain.solana ? 'agentTokenMintInvalid' : 'agentTokenContractInvalid' }
    if (!SYMBOL.test(token.symbol.trim())) errors.symbol = { key: 'agentTokenSymbolInvalid' }
    const decimals = decimalsOf(token.decimals)
    if (decimals === undefined) errors.decimals = { key: 'agentTokenDecimalsInvalid' }
    else amount = checkAmount(values.amount, decimals, locale, 'agentTokenAmountInvalid')
  } else {
    // ETH's message names its 18 decimals; SOL's says how many.
    const invalid = chain.solana ? 'agentTokenAmountInvalid' : 'agentAmountInvalid'
    amount = checkAmount(values.amount, chain.decimals, locale, invalid)
  }
  if (amount && 'error' in amount) errors.amount = amount.error
  const lines = values.destinations.split('\n')
  const bad = lines.findIndex((line) => line.trim() !== '' && !chain.address.test(line.trim()))
  if (bad >= 0)
    errors.destinations = {
      key: chain.solana ? 'agentDestinationInvalidSolana' : 'agentDestinationInvalid',
      values: { line: bad + 1 },
    }
  return errors
}

/** The grant form of `<AgentAllowance/>`, in a chunk of its own. */
export function AgentAllowanceForm({
  ui,
  caip2,
  agentPublicKey,
  defaultAgentName,
  takenNames = [],
  onCancel,
  onGranted,
  onHeld,
}: {
  ui: Ui<LimitsKey>
  caip2: string
  agentPublicKey: string | undefined
  defaultAgentName: string | undefined
  /** The names of the agents listed above: the service refuses a second allowance under one. */
  takenNames?: readonly string[] | undefined
  onCancel: () => void
  onGranted: (grant: GrantAgentAllowanceReturnType & { agentName: string }) => void
  /** The grant waits for the user's second factor (its challenge resumes into the whole grant). */
  onHeld: (challenge: MfaRequiredError<GrantAgentAllowanceReturnType>, agentName: string) => void
}) {
  const id = useId()
  const chain = chainOf(caip2)
  const grant = useGrantAgentAllowance()
  const [name, setName] = useState(defaultAgentName ?? '')
  const [key, setKey] = useState(agentPublicKey ?? '')
  const [amount, setAmount] = useState('')
  const [assetKind, setAssetKind] = useState<'native' | 'token'>('native')
  const [token, setToken] = useState<TokenFields>({
    contract: '',
    symbol: '',
    decimals: chain.tokenDecimals,
  })
  const tokenFields = assetKind === 'token' ? token : undefined
  const [period, setPeriod] = useState<SpendingLimitPeriod>('PERIOD_DAY')
  const [destinations, setDestinations] = useState('')
  const [checked, setChecked] = useState<ReturnType<typeof validate>>({})
  // A field's error goes once the field is edited (it is checked again on the next submit).
  const edited = (field: Field) =>
    setChecked((errors) => {
      if (!errors[field]) return errors
      const { [field]: _, ...rest } = errors
      return rest
    })
  const form = useRef<HTMLFormElement>(null)
  // A grant waiting for a second factor is no failure: the step-up takes over from the form.
  const failed = grant.isError && errorCodeOf(grant.error) !== 'MFA_REQUIRED' ? grant.error : undefined
  // The service's refusal of a taken name shows on the name field, as the form's own check does.
  const nameTaken = failed !== undefined && errorCodeOf(failed) === 'ALREADY_EXISTS'
  const errors: ReturnType<typeof validate> = nameTaken
    ? { ...checked, name: { key: 'agentNameTaken' } }
    : checked
  // A refused grant re-enables the form after its busy (disabled) submit button lost the focus:
  // the name takes it when the name is taken, else the submit button (the error is above it).
  useEffect(() => {
    if (!failed) return
    if (nameTaken) document.getElementById(`${id}-name`)?.focus()
    else form.current?.querySelector<HTMLButtonElement>('button[type="submit"]')?.focus()
  }, [failed, nameTaken, id])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const found = validate(
      { name, key, amount, destinations, token: tokenFields },
      chain,
      takenNames,
      ui.locale,
    )
    setChecked(found)
    const first = FIELDS.find((field) => found[field])
    if (first) {
      document.getElementById(`${id}-${first}`)?.focus()
      return
    }
    const agentName = name.trim()
    const decimals = tokenFields ? Number(tokenFields.decimals) : chain.decimals
    // An EVM address is one in any case (stored lower-case); a base58 one is not.
    const address = (text: string) => (chain.solana ? text.trim() : text.trim().toLowerCase())
    grant.mutate(
      {
        agentName,
        publicKey: key.trim(),
        caip2,
        ...(tokenFields
          ? {
              asset: chain.solana
                ? { type: 'SPENDING_LIMIT_ASSET_SPL', caip2, mint: address(tokenFields.contract) }
                : { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2, contract: address(tokenFields.contract) },
              token: { symbol: tokenFields.symbol.trim(), decimals },
            }
          : {}),
        amount: (unitsOf(amount, decimals, ui.locale) as bigint).toString(),
        period,
        allowedDestinations: destinations.split('\n').map(address).filter(Boolean),
      },
      {
        onSuccess: (result) => onGranted({ ...result, agentName }),
        onError: (caught) => {
          if (errorCodeOf(caught) === 'MFA_REQUIRED')
            onHeld(caught as MfaRequiredError<GrantAgentAllowanceReturnType>, agentName)
        },
      },
    )
  }

  const error = (field: Field) => {
    const found = errors[field]
    return found ? (
      <p className="lk-field-error" id={`${id}-${field}-error`}>
        {ui.t(found.key, found.values)}
      </p>
    ) : null
  }
  const described = (field: Field, hint?: string) =>
    [errors[field] ? `${id}-${field}-error` : undefined, hint].filter(Boolean).join(' ') || undefined

  return (
    <form className="lk-stack" ref={form} onSubmit={submit} noValidate aria-label={ui.t('agentGrant')}>
      <div className="lk-field">
        <label className="lk-label" htmlFor={`${id}-name`}>
          {ui.t('agentName')}
        </label>
        <input
          id={`${id}-name`}
          className="lk-input"
          value={name}
          maxLength={64}
          autoComplete="off"
          // biome-ignore lint/a11y/noAutofocus: the user just asked for this form; its first field
          autoFocus
          disabled={grant.isPending}
          aria-invalid={errors.name ? true : undefined}
          aria-describedby={described('name')}
          onChange={(event) => {
            setName(event.target.value)
            edited('name')
            // The service's refusal of the name (below the form too) is for the name as it was.
            if (nameTaken) grant.reset()
          }}
        />
        {error('name')}
      </div>
      {agentPublicKey ? (
        <dl className="lk-kv">
          <dt>{ui.t('agentKey')}</dt>
          <dd className="lk-mono" dir="ltr">
            {agentPublicKey}
          </dd>
        </dl>
      ) : (
        <div className="lk-field">
          <label className="lk-label" htmlFor={`${id}-key`}>
            {ui.t('agentKey')}
          </label>
          <input
            id={`${id}-key`}
            className="lk-input lk-mono"
            dir="ltr"
            value={key}
            spellCheck={false}
            autoComplete="off"
            disabled={grant.isPending}
            aria-invalid={errors.key ? true : undefined}
            aria-describedby={described('key', `${id}-key-hint`)}
            onChange={(event) => {
              setKey(event.target.value)
              edited('key')
            }}
          />
          <p className="lk-hint" id={`${id}-key-hint`}>
            {ui.t('agentKeyHint')}
          </p>
          {error('key')}
        </div>
      )}
      <div className="lk-field">
        <label className="lk-label" htmlFor={`${id}-asset`}>
          {ui.t('agentAsset')}
        </label>
        <select
          id={`${id}-asset`}
          className="lk-select"
          value={assetKind}
          disabled={grant.isPending}
          onChange={(event) => setAssetKind(event.target.value as 'native' | 'token')}
        >
          <option value="native">{chain.native}</option>
          <option value="token">{ui.t(chain.solana ? 'agentAssetSplToken' : 'agentAssetToken')}</option>
        </select>
      </div>
      {tokenFields ? (
        <>
          <div className="lk-field">
            <label className="lk-label" htmlFor={`${id}-contract`}>
              {ui.t(chain.solana ? 'agentTokenMint' : 'agentTokenContract')}
            </label>
            <input
              id={`${id}-contract`}
              className="lk-input lk-mono"
              dir="ltr"
              value={token.contract}
              placeholder={chain.solana ? undefined : '0x…'}
              spellCheck={false}
              autoComplete="off"
              disabled={grant.isPending}
              aria-invalid={errors.contract ? true : undefined}
              aria-describedby={described('contract')}
              onChange={(event) => {
                setToken({ ...token, contract: event.target.value })
                edited('contract')
              }}
            />
            {error('contract')}
          </div>
          <div className="lk-row" data-wrap="" style={{ alignItems: 'flex-start' }}>
            <div className="lk-field lk-grow" style={{ flexBasis: '7rem' }}>
              <label className="lk-label" htmlFor={`${id}-symbol`}>
                {ui.t('agentTokenSymbol')}
              </label>
              <input
                id={`${id}-symbol`}
                className="lk-input"
                dir="ltr"
                value={token.symbol}
                placeholder="USDC"
                maxLength={11}
                autoComplete="off"
                disabled={grant.isPending}
                aria-invalid={errors.symbol ? true : undefined}
                aria-describedby={described('symbol')}
                onChange={(event) => {
                  setToken({ ...token, symbol: event.target.value })
                  edited('symbol')
                }}
              />
              {error('symbol')}
            </div>
            <div className="lk-field lk-grow" style={{ flexBasis: '7rem' }}>
              <label className="lk-label" htmlFor={`${id}-decimals`}>
                {ui.t('agentTokenDecimals')}
              </label>
              <input
                id={`${id}-decimals`}
                className="lk-input"
                dir="ltr"
                inputMode="numeric"
                value={token.decimals}
                autoComplete="off"
                disabled={grant.isPending}
                aria-invalid={errors.decimals ? true : undefined}
                aria-describedby={described('decimals')}
                onChange={(event) => {
                  setToken({ ...token, decimals: event.target.value })
                  edited('decimals')
                }}
              />
              {error('decimals')}
            </div>
          </div>
        </>
      ) : null}
      <LimitFields
        ui={ui}
        id={id}
        amountLabel={
          tokenFields
            ? ui.t('agentAmountIn', {
                unit:
                  tokenFields.symbol.trim() || ui.t(chain.solana ? 'agentAssetSplToken' : 'agentAssetToken'),
              })
            : chain.solana
              ? ui.t('agentAmountIn', { unit: chain.native })
              : ui.t('agentAmount')
        }
        amount={amount}
        onAmountChange={(value) => {
          setAmount(value)
          edited('amount')
        }}
        placeholder="0.01"
        amountError={errors.amount ? ui.t(errors.amount.key, errors.amount.values) : undefined}
        period={period}
        onPeriodChange={setPeriod}
        disabled={grant.isPending}
      />
      <div className="lk-field">
        <label className="lk-label" htmlFor={`${id}-destinations`}>
          {ui.t('agentDestinations')}
        </label>
        <textarea
          id={`${id}-destinations`}
          className="lk-textarea lk-mono"
          dir="ltr"
          rows={2}
          spellCheck={false}
          value={destinations}
          placeholder={chain.solana ? undefined : '0x…'}
          disabled={grant.isPending}
          aria-invalid={errors.destinations ? true : undefined}
          aria-describedby={described('destinations', `${id}-destinations-hint`)}
          onChange={(event) => {
            setDestinations(event.target.value)
            edited('destinations')
          }}
        />
        <p className="lk-hint" id={`${id}-destinations-hint`}>
          {ui.t(tokenFields && chain.solana ? 'agentDestinationsHintSpl' : 'agentDestinationsHint')}
        </p>
        {error('destinations')}
      </div>
      {failed && !nameTaken ? (
        <Alert tone="error">
          <ErrorText ui={ui} error={grant.error} />
        </Alert>
      ) : null}
      <div className="lk-row" data-wrap="">
        <Button type="submit" loading={grant.isPending}>
          {grant.isPending ? ui.t('agentGranting') : ui.t('agentGrant')}
        </Button>
        <Button variant="ghost" onClick={onCancel} disabled={grant.isPending}>
          {ui.t('cancel')}
        </Button>
      </div>
    </form>
  )
}

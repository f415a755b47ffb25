const WEI_PER_ETH = 10n ** 18n

/** Wei (a bigint or a decimal string) as ETH, every significant digit kept: `1500000000000000000` → `1.5`. */
export function formatEth(wei: bigint | string): string {
  const value = typeof wei === 'bigint' ? wei : BigInt(wei)
  const sign = value < 0n ? '-' : ''
  const abs = value < 0n ? -value : value
  const fraction = (abs % WEI_PER_ETH).toString().padStart(18, '0').replace(/0+$/, '')
  return `${sign}${abs / WEI_PER_ETH}${fraction ? `.${fraction}` : ''}`
}

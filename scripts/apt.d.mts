/** `apt-get install` of `packages` as root or through `sudo -n`; throws naming `what` and `hint` when it cannot. */
export function aptInstall(packages: string[], options: { what: string; hint: string }): void

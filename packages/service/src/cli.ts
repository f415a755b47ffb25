// Node only: `latchkey-service <command> …` (and `npm run service -- …` in the repository). Each
// command lives in `commands/<name>.ts` and exports `run(argv)`; only the one asked for is loaded.
// Flags alone (`latchkey-service --port 0`) still mean `dev`, as in earlier versions.

const NAME = 'latchkey-service'

/** The commands, loaded on demand: `run` gets the arguments after the command's name. */
const COMMANDS: Record<string, () => Promise<{ run(argv: string[]): Promise<void> }>> = {
  dev: () => import('./commands/dev.ts'),
  start: () => import('./commands/start.ts'),
  init: () => import('./commands/init.ts'),
  config: () => import('./commands/config.ts'),
  migrate: () => import('./commands/migrate.ts'),
  backup: () => import('./commands/backup.ts'),
  restore: () => import('./commands/restore.ts'),
  'rotate-master-key': () => import('./commands/rotateMasterKey.ts'),
  import: () => import('./commands/importUsers.ts'),
  'export-users': () => import('./commands/exportUsers.ts'),
  webhooks: () => import('./commands/webhooks.ts'),
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0]
  const load = command === undefined ? undefined : COMMANDS[command]
  // `dev` reads its own name (and answers --help, --version, no arguments and unknown commands).
  if (load === undefined || command === 'dev') {
    const dev = await COMMANDS.dev!()
    return dev.run(argv)
  }
  const loaded = await load()
  return loaded.run(argv.slice(1))
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`${NAME}: ${error.message}\n`)
  process.exit(1)
})

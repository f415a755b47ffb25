#!/usr/bin/env node
// `latchkey-service dev [--port N] [--data-dir DIR] [--json] …`: the local service (see README).
import '../dist/cli.js'

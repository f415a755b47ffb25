#!/usr/bin/env node
// `latchkey dev [--port N] [--data-dir DIR] [--json] …`: the local service (see README).
import '../dist/server/cli.js'

import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import 'latchkey/styles.css'
import './playground.css'
import { App } from './App.tsx'
import { loadPlaygroundConfig } from './loadPlaygroundConfig.ts'

const root = createRoot(document.getElementById('root')!)

loadPlaygroundConfig().then(
  (config) =>
    root.render(
      <StrictMode>
        <App config={config} />
      </StrictMode>,
    ),
  (error: Error) =>
    root.render(
      <main className="pg-layout" style={{ gridTemplateColumns: '1fr' }}>
        <section className="pg-card" role="alert">
          <h1 style={{ marginTop: 0, fontSize: 20 }}>The playground can’t reach its local service</h1>
          <p className="pg-error">{error.message}</p>
          <p className="pg-muted">
            Start it with <code>npm start</code>: it runs the local service, an EVM node and this page
            together.
          </p>
        </section>
      </main>,
    ),
)

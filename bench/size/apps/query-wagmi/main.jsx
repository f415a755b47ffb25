// The react-query + wagmi app on its own: what the app pays before Latchkey joins it.
import { createRoot } from 'react-dom/client'
import { App } from './App.jsx'

createRoot(document.getElementById('root')).render(<App />)

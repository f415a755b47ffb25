// The react-only baseline every other app is measured against: what react + react-dom cost.
import { useState } from 'react'
import { createRoot } from 'react-dom/client'

function App() {
  const [count, setCount] = useState(0)
  return (
    <button type="button" onClick={() => setCount((n) => n + 1)}>
      Clicked {count} times
    </button>
  )
}

createRoot(document.getElementById('root')).render(<App />)

import { useCallback, useEffect, useState } from 'react'

export type Route = '/' | '/operator' | '/wagmi' | '/solana' | '/delegated' | '/agent' | '/security'

const ROUTES: readonly Route[] = ['/operator', '/wagmi', '/solana', '/delegated', '/agent', '/security']

const routeOf = (pathname: string): Route =>
  ROUTES.find((route) => route === pathname.replace(/\/+$/, '')) ?? '/'

/** The playground's pages, on the History API (the query string, e.g. `?service=`, is kept). */
export function useRoute(): [Route, (to: Route) => void] {
  const [route, setRoute] = useState<Route>(() => routeOf(window.location.pathname))
  useEffect(() => {
    const onPop = () => setRoute(routeOf(window.location.pathname))
    window.addEventListener('popstate', onPop)
    return () => window.removeEventListener('popstate', onPop)
  }, [])
  const navigate = useCallback((to: Route) => {
    window.history.pushState(null, '', `${to}${window.location.search}`)
    setRoute(to)
    window.scrollTo(0, 0)
  }, [])
  return [route, navigate]
}

import type { Route } from './useRoute.ts'

/** The way to the delegated-access demo, among the developer tools (the header has no room on phones). */
export function DelegatedAccessLink({ navigate }: { navigate: (to: Route) => void }) {
  return (
    <section className="pg-card" aria-labelledby="pg-delegated-link-title">
      <h2 id="pg-delegated-link-title">Delegated access</h2>
      <p className="pg-card-lead" style={{ margin: '6px 0 0' }}>
        Let your app’s back end sign for you within a policy, and see why each request ran or was refused.{' '}
        <a
          href="/delegated"
          onClick={(event) => {
            event.preventDefault()
            navigate('/delegated')
          }}
        >
          Open the delegated-access demo
        </a>
      </p>
    </section>
  )
}

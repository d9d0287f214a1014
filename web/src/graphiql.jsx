// GraphiQL for GET /graphql, bundled with its React so that the page needs nothing but this
// server (async-graphql's stock page loads React and GraphiQL from a CDN). The token the
// explorer keeps in this tab's session storage, if any, pre-fills the Authorization header.
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';

const TOKEN_KEY = 'tributary.token';
const root = document.getElementById('graphiql');
const url = root.dataset.endpoint || '/graphql';
let token = null;
try {
  token = sessionStorage.getItem(TOKEN_KEY);
} catch {
  // Storage may be off; GraphiQL still works with a header typed in by hand.
}
const headers = JSON.stringify({ Authorization: token ? `Bearer ${token}` : 'Bearer <your token>' }, null, 2);

const defaultQuery = `# Tributary's GraphQL API. Requests need a token: put it in the Headers pane
# below as {"Authorization": "Bearer trb_..."} (tributary token create prints one).
# The lineage explorer is at /ui.

{
  containers(size: 10) {
    total
    items { id name database schema datastore { name } }
  }
}
`;

createRoot(root).render(
  <GraphiQL fetcher={createGraphiQLFetcher({ url })} defaultQuery={defaultQuery} defaultHeaders={headers} isHeadersEditorEnabled shouldPersistHeaders={false} />,
);

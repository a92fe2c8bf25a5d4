// Asking rosterd to act (a JSON POST) or to tell (a GET): a refusal becomes an error carrying rosterd's own words
// (every refusal is `{"error": …}`), so the page can show the person why, not just a status.

export class ApiError extends Error {}

async function answered(response) {
  const doc = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(doc.error || `HTTP ${response.status}`);
  return doc;
}

export async function post(path, body = {}) {
  const response = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return answered(response);
}

export async function get(path) {
  return answered(await fetch(path, { credentials: "same-origin" }));
}

// Where a session's routes are: this node's /sessions/{key}, or, for a session another node of
// the swarm owns (a record of the union, marked with its node's standing), the same routes
// under /swarm/{node}/sessions/{key}, which this node forwards to the owner as they are.
export function sessionPath(record) {
  const key = encodeURIComponent(record.session_key);
  const remote = record.peer_state && record.peer_state !== "local";
  return remote ? `/swarm/${encodeURIComponent(record.node_id)}/sessions/${key}` : `/sessions/${key}`;
}

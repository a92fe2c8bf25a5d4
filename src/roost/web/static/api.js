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

"""Allow a `git push` only when the sibling test session is idle with a green recap.

A control workflow built on rosterd's contract, not inside it: follow the swarm's changes, and
when a session asks to run `git push`, look up `tests-NAME` (wherever in the swarm it runs) and
answer allow or reject. Every other request is left to a person. Usage:
    python approve_push.py /run/user/1000/roost/rosterd.sock
"""

import json
import sys

import httpx

api = httpx.Client(transport=httpx.HTTPTransport(uds=sys.argv[1]), base_url="http://rosterd", timeout=None)
asked = set()  # a request is announced (attention), then its gate makes it answerable (updated)
with api.stream("GET", "/swarm/changes") as changes:
    for line in changes.iter_lines():
        event = json.loads(line[5:]) if line.startswith("data:") else {}
        waiting = ((event.get("record") or {}).get("pending") or {}) if "session_key" in event else {}
        if not waiting.get("answerable") or waiting["id"] in asked:
            continue
        asked.add(waiting["id"])
        key = event["session_key"]
        pending = api.get(f"/sessions/{key}").json()["pending"]
        if not (pending and pending["tool"] == "Bash" and "git push" in pending["summary"]):
            continue  # a human answers everything else
        tests = api.get(f"/sessions/tests-{event['record']['name']}").json()
        ok = tests.get("activity") == "idle" and "passed" in (tests.get("recap") or "")
        answer = {"option": "allow" if ok else "reject", "request_id": pending["id"]}
        print(
            key,
            answer["option"],
            api.post(f"/sessions/{key}/permission", json=answer).status_code,
            flush=True,
        )

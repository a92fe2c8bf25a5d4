"""Claude Code as it is after its first run, for the agent tier and the benchmarks that start it:
the onboarding done, the fake API's key accepted, the project trusted, nothing sent outside."""

from __future__ import annotations

import json
from pathlib import Path

API_KEY = "sk-ant-roost-tests-0123456789abcdefghijklmn"
"""What Claude sends the fake model API; it is never a real key."""
CLAUDE_QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}
"""What Claude must not do on a test machine: reach out for updates, telemetry or surveys."""


def claude_home(home: Path, project: Path, *also: Path) -> None:
    """``home`` as Claude Code finds it after its first run: onboarded, our API key accepted,
    ``project`` (and the folders ``also`` names) trusted, and permissions asked for (2.1.332
    defaults to "auto" mode, which runs `touch x` without asking)."""
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "hasSeenAutoDefaultNotice": True,
                "hasSeenAutoDefaultNudge": True,
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                "projects": {str(folder): {"hasTrustDialogAccepted": True} for folder in (project, *also)},
            }
        )
    )
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"defaultMode": "default"}}))

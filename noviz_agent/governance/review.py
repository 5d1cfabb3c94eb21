"""What the interaction log says about the agent's tools: requested modules, tools offered but never
used, guards fired, refusals and failures per tool. Counting only; the desk report reads the rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

KINDS = ("module", "tool", "guard")


def _names(value) -> list[str]:
	if not value:
		return []
	if isinstance(value, list | tuple):
		return [str(v).strip() for v in value if str(v).strip()]
	return [part.strip() for part in str(value).replace("\n", ",").split(",") if part.strip()]


def usage(logs: Iterable[dict], calls: Iterable[dict]) -> list[dict]:
	"""One row per module, tool and guard: how often offered, used, refused, failed or fired."""
	modules, offered, guards = Counter(), Counter(), Counter()
	turns = 0
	for log in logs:
		turns += 1
		modules.update(set(_names(log.get("modules"))))
		offered.update(set(_names(log.get("tools_offered"))))
		guards.update(_names(log.get("guards")))
	used, refused, failed = Counter(), Counter(), Counter()
	for call in calls:
		name = call.get("tool") or call.get("name")
		if not name:
			continue
		used[name] += 1
		if call.get("status") == "refused":
			refused[name] += 1
		elif call.get("status") == "error":
			failed[name] += 1
	rows = [
		{"kind": "module", "name": n, "turns": c, "share": _share(c, turns)} for n, c in modules.most_common()
	]
	for name in sorted(set(offered) | set(used), key=lambda n: (-offered[n], n)):
		rows.append(
			{
				"kind": "tool",
				"name": name,
				"offered": offered[name],
				"used": used[name],
				"refused": refused[name],
				"failed": failed[name],
				"never_used": int(offered[name] > 0 and used[name] == 0),
			}
		)
	rows += [{"kind": "guard", "name": n, "fired": c} for n, c in guards.most_common()]
	return rows


def _share(count: int, total: int) -> float:
	return round(100.0 * count / total, 1) if total else 0.0

"""Standing goals: agents that watch the books for a person, say what changed, and prepare the next step.

spec.py      a goal as data (owner, plain-language goal, schedule, company, what it may do, caps,
             where findings go), checked with errors that say what to fix
schedule.py  when a goal runs next (daily, weekly, monthly or a cron expression, via croniter)
watches.py   the watch kinds a goal resolves to, each computed with the analytics catalogue through
             the gateway as the owner, and what each needs to read
findings.py  a finding (figures with company, currency and period, the records behind it, why it
             matters), its stable fingerprint, and what changed since the last run
digest.py    a run's findings grouped for the person: text, e-mail HTML and the chat's response
runner.py    one run: stop checks, watches, changes, the model only when something changed (bounded,
             through the same loop and gateway as a turn), proposals, the run's log; one retry, no overlap

Nothing here imports frappe: the site's side (the Agent Goal DocType, the scheduler, delivery) is
`noviz_agent/edge/frappe_goals.py`.
"""

"""The frappe edge: the only modules (with api.py, commands.py, tasks.py, hooks.py and the DocType
controllers) that import frappe. Each turns site state into the plain objects the engine, tools,
governance, knowledge and intake packages work with, and back. Importing this package does nothing;
each module is imported where it is used.

| module | what it does | called by |
| --- | --- | --- |
| frappe_session | the turn's Session for the signed-in person: identity, connector, allowance, limits, stores, provider, progress events; the process-wide tool registry | api, tasks, frappe_files, frappe_evaluation, frappe_doctor, commands |
| frappe_allowance | which tools a person may be offered (site permissions + Agent Role Policy), cached in Redis and dropped on role/permission/policy changes; the same generation keeps the configuration every turn reads (budgets, procedures, companies, systems) | frappe_session, frappe_governance, frappe_sops, frappe_systems, frappe_connector; hooks (doc_events) |
| frappe_knowledge | the site's knowledge base: settings, desk knowledge documents, the store under private files | frappe_session, commands (index-knowledge, knowledge-status), frappe_doctor, api |
| frappe_doctor | `noviz-agent doctor`: settings, tool schemas vs the provider's rules, provider, knowledge store, other systems | commands |
| frappe_governance | budgets in Redis reconciled to the database, the shared rate gate, the answer cache, audited reads, retention | api, frappe_turns, tasks (nightly retention) |
| frappe_turns | background turns: queue, run in any worker, stop, recover a lost one | api, tasks |
| frappe_files | document intake on a site: the uploaded File, candidates read as the person, the draft | api, frappe_session |
| frappe_sops | procedures on a site: Agent SOP records as specs, runs in Agent SOP Run, the turn's hooks | api, Agent SOP controller |
| frappe_systems | other systems (Helpdesk, ...): the person's connections as connectors beside the site's own | frappe_session, frappe_doctor |
| frappe_evaluation | `noviz-agent eval`: the labelled questions against this site through the real turn | commands |
| frappe_warm | what a background worker preloads (modules, registry, router, embeddings) before RQ forks its jobs | commands (worker, and plain `bench worker`), frappe_turns |
| frappe_worker | `bench noviz-agent worker --no-fork`: RQ's SimpleWorker with memory and job bounds, at the web's CPU priority | commands |
| frappe_goals | standing goals: their schedule, runs as the owner, findings, digests and prepared proposals | hooks (scheduler, every 5 minutes), api |
| frappe_mcp | the agent's tools over the Model Context Protocol, as the signed-in person (API key or OAuth) | api, hooks (OAuth metadata pages) |
| frappe_versions | everything that differs between Frappe/ERPNext 15 and 16 (aggregate syntax, desk paths, the site test base class), in one adapter | translate, frappe_connector, tests |

The connector contract's frappe implementation stays in `noviz_agent/connectors/frappe_connector.py`:
it is a connector like the others, reached by the engine only through the contract.
"""

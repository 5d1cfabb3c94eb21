"""Standard operating procedures: the agent follows a written procedure step by step.

parser       procedure text → numbered lines and conditions; problems with line numbers
actions      the action repository (registry tools, ask, tell, search knowledge, end)
matching     a free-text step → one action, with its score (lexical; embeddings when present)
procedures   compile a procedure (every step resolved), choose the one a request fits
memory       execution memory and the run state kept with the conversation; run stores
values       reading ids and dates from the person's answers, refusing ambiguous ones
conditions   the baseline's simple rules for 'If ...:' lines
controllers  the baseline (rules) and the model-driven controller (state and action steps)
runner       runs a procedure: steps through the gateway, faults, repeats, resumption
service      the turn's hook: start a fitting procedure, continue the running one
examples     the shipped example procedures (fixtures), read without a site
"""

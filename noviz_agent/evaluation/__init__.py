"""The evaluation harness: labelled questions run through the real turn, graded, totalled.

seed.py        the seeded trading data (shaped like benchmarks/bench_seed.py) and the people who ask
questions.json the labelled questions: person, tools that can answer, calls the oracle makes, what is expected
expected.py    expected figures, records and values computed from the data itself, never from tool output
oracle.py      the scripted oracle model: makes the labelled calls and answers from what they returned
harness.py     runs each question through engine.turn.run_turn, grades it and prints the report
"""

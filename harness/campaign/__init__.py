"""Nightly campaigns: worker processes around `run_campaign`, a shared example database,
coverage feedback (reference-model branches and the action × outcome matrix), seed shards and
the libFuzzer entry point (`atheris_entry`).

Reached through `Supervisor(spec).run()` (the parent), `worker` (`python -m harness.campaign.worker`)
and `atheris_entry` (`python -m harness.campaign.atheris_entry`).
"""

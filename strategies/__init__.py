"""Hypothesis strategies for AHP: URIs, attachments, messages, states, actions, sequences, schema.

Entry points for the engine and for your own tests (see docs/strategies.md):

``initial_states(kind)`` (= ``strategies.states.states``)
    A valid, internally consistent initial state of one of the seven state kinds
    (``root``, ``session``, ``chat``, ``terminal``, ``changeset``, ``annotations``,
    ``resourceWatch``). (Exported under another name so that ``strategies.states`` stays the
    module.)

``actions_for(kind, state, profile=DEFAULT_PROFILE, *, types=None, context=None)``
    A *state-aware* action strategy: the action names ids that exist in ``state`` (active
    turn, parts, tool calls in the right status, open requests, pending messages, catalog
    entries, directories, …), with a small share of stale and near-miss ids. Use it inside a
    Hypothesis stateful machine: ``action = data.draw(actions_for(kind, self.state))``.

``valid_actions(kind=None)`` / ``action_of_type(type, state=None)``
    State-free valid actions (every 0.7.0 type, plus 0.8.0's ``workingDirectoryReplaced``).

``adversarial_actions(kind, profile=DEFAULT_PROFILE)``
    Unknown and near-miss types, foreign families, missing/extra fields, wrong JSON types,
    later-version actions, oversized strings, deep nesting, tool results that override
    tool-call fields.

``action_sequences(kind)`` / ``multiroot_scenarios(families=None)``
    State-aware sequences folded through the reference model, and multiroot scenarios across
    a session and its chats (0..N directories, absent/empty/partial subsets, immutable-primary
    removal, dangling subsets, equivalent spellings, 0.8.0 replace chains).

``SchemaSet`` (``strategies.schema``)
    A spec directory's schemas, linted (``SchemaProblem`` on unrepairable problems),
    INV-007-patched, with validators and schema-derived strategies per definition.

``INVENTORY`` (``strategies.inventory``)
    Every strategy with what it targets; ``ahp-fuzz strategies`` prints it.
"""

from .actions import (
    ActionContext,
    action_of_type,
    actions_for,
    adversarial_actions,
    stale_actions_for,
    valid_actions,
)
from .sequences import (
    ActionSequence,
    MultirootScenario,
    Step,
    action_sequences,
    multiroot_scenarios,
)
from .states import states as initial_states

__all__ = [
    "ActionContext",
    "ActionSequence",
    "MultirootScenario",
    "Step",
    "action_of_type",
    "action_sequences",
    "actions_for",
    "adversarial_actions",
    "initial_states",
    "multiroot_scenarios",
    "stale_actions_for",
    "valid_actions",
]

"""Actions: a valid strategy for every action type, state-aware strategies, adversarial ones.

* **Valid** (`valid_actions`, `action_of_type`): every 0.7.0 action type (and 0.8.0's
  `session/workingDirectoryReplaced`), schema-valid, ids from small pools.
* **State-aware** (`actions_for(kind, state, profile)`): actions that *refer to what is in the
  state* — the active turn id, markdown/reasoning part ids, tool-call ids in the status each
  action needs, open input-request ids and their question ids, pending-message ids, completed
  turn ids, chat URIs of the catalog, directories of the set, customization/MCP ids, file,
  operation, annotation, entry and command ids. The type is chosen first, weighted by what the
  state makes applicable; then only that type's strategy is built. A small share (`stale`, per
  id field) is deliberately stale or a near miss, and directories are sometimes an
  equivalent-but-different spelling (INV-034).
* **Adversarial** (`adversarial_actions(kind)` and the named tactics): unknown and near-miss
  types (INV-004), foreign-family actions (INV-005), missing and extra fields, wrong JSON types,
  actions from a later version (INV-046), oversized strings, deep nesting, tool results with
  extra keys that override tool-call fields (INV-051).

One module per channel family (`chat`, `session`, `root`, `terminal`, `changeset`,
`annotations`), the type table and public entry points in `dispatch`, the adversarial tactics
in `adversarial`. Every strategy returns plain JSON dicts (bare `StateAction` payloads).
"""

from ._base import COLD, HOT, STALE, ActionContext, Builder, fresh_id
from .adversarial import (
    EXTRA_FIELD_NAMES,
    FUTURE_TYPES,
    RESULT_OVERRIDE_KEYS,
    STRING_FIELDS,
    adversarial_actions,
    deeply_nested_actions,
    extra_field_actions,
    foreign_family_actions,
    json_depth,
    later_version_actions,
    missing_field_actions,
    missing_inner_field_actions,
    near_miss_type_actions,
    near_miss_types,
    nested_value,
    oversized_string_actions,
    tool_results_with_extra_keys,
    unknown_action_types,
    wrong_inner_type_actions,
    wrong_type_actions,
)
from .dispatch import BUILDERS, action_of_type, actions_for, offer, stale_actions_for, valid_actions
from .required import ANY_TYPED_FIELDS, REQUIRED_FIELDS, missing_required

__all__ = [
    "ANY_TYPED_FIELDS",
    "BUILDERS",
    "COLD",
    "EXTRA_FIELD_NAMES",
    "FUTURE_TYPES",
    "HOT",
    "REQUIRED_FIELDS",
    "RESULT_OVERRIDE_KEYS",
    "STALE",
    "STRING_FIELDS",
    "ActionContext",
    "Builder",
    "action_of_type",
    "actions_for",
    "adversarial_actions",
    "deeply_nested_actions",
    "extra_field_actions",
    "foreign_family_actions",
    "fresh_id",
    "json_depth",
    "later_version_actions",
    "missing_field_actions",
    "missing_inner_field_actions",
    "missing_required",
    "near_miss_type_actions",
    "near_miss_types",
    "nested_value",
    "offer",
    "oversized_string_actions",
    "stale_actions_for",
    "tool_results_with_extra_keys",
    "unknown_action_types",
    "valid_actions",
    "wrong_inner_type_actions",
    "wrong_type_actions",
]

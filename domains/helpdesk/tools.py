"""Tools of the helpdesk domain: the IT Service Desk of Larkspur Fabrication Group.

The engine loads this file by path and reads ``TOOLS`` (catalog order: look-ups,
then actions, ``record_decision`` last). Every tool takes the episode database
first; the rest of the signature and the Google-style docstring become the JSON
schema the agent sees.

The tools enforce data integrity only (ids exist, an account is unlocked or
disabled once, a membership is granted once, software is installed on its
owner's device once). They deliberately do not enforce the procedure (ticket
first, identity verification levels, who may ask, approvals, eligibility,
prohibited software, privacy): whether the agent follows it is what the
benchmark measures.

Reference data (``employees``, ``accounts``, ``devices``, ``mfa_enrollments``,
``groups``, ``memberships``, ``resources``, ``software``) are dicts keyed by id,
so a scenario's ``initial_state_patch`` adds people to the base directory by
deep merge. Action records (``tickets``, ``approvals``, ``identity_checks``,
``account_actions``, ``installations``, ``escalations``, ``decisions``) are
lists.

What the desk must never disclose (security investigations, phishing flags,
scheduled terminations) is returned under a key named ``internal``; a person's
own contact details, location and schedule under ``private``. Identity factors
on file are never returned at all. Time comes from the scenario clock; every
date is a Mountain Time calendar date (America/Denver).

The tools live by area in the sibling modules (``_common``, ``_lookups``, ``_tickets``,
``_access``, ``_decision``, ``_routine``); this module is the pack's public face:
``TOOLS`` (the catalog) and ``ROUTINE``, loaded by the engine (the folder is imported as a
package, so the modules import each other).
"""

from ._access import (
    disable_account,
    grant_group,
    install_software,
    request_approval,
    reset_mfa,
    reset_password,
    revoke_group,
    unlock_account,
)
from ._common import (
    ESCALATION_QUEUE,
    IDENTITY_FACTORS,
    INTERNAL_NOTICE,
    MOUNTAIN_TIME,
    PRIVATE_NOTICE,
    ApprovalType,
    DisableReason,
    EscalationType,
    RejectionReason,
    TicketCategory,
    TicketStatus,
)
from ._decision import (
    escalate,
    record_decision,
)
from ._lookups import (
    get_access_policy,
    get_accounts,
    get_approvals,
    get_devices,
    get_group_memberships,
    get_tickets,
    list_resources,
    lookup_employee,
    lookup_software,
    search_directory,
)
from ._routine import (
    BADGE_PATTERN,
    DATE_PATTERN,
    EMPLOYEE_ID_PATTERN,
    RESOURCE_ID_PATTERN,
    ROUTINE,
    ROUTINE_APPROVAL_TYPE,
    ROUTINE_ESCALATION_TYPE,
    ROUTINE_REJECTION_REASON,
    SOFTWARE_ID_PATTERN,
)
from ._tickets import (
    create_ticket,
    update_ticket,
    verify_identity,
)

__all__ = [
    "ApprovalType",
    "BADGE_PATTERN",
    "DATE_PATTERN",
    "DisableReason",
    "EMPLOYEE_ID_PATTERN",
    "ESCALATION_QUEUE",
    "EscalationType",
    "IDENTITY_FACTORS",
    "INTERNAL_NOTICE",
    "MOUNTAIN_TIME",
    "PRIVATE_NOTICE",
    "RESOURCE_ID_PATTERN",
    "ROUTINE",
    "ROUTINE_APPROVAL_TYPE",
    "ROUTINE_ESCALATION_TYPE",
    "ROUTINE_REJECTION_REASON",
    "RejectionReason",
    "SOFTWARE_ID_PATTERN",
    "TOOLS",
    "TicketCategory",
    "TicketStatus",
    "create_ticket",
    "disable_account",
    "escalate",
    "get_access_policy",
    "get_accounts",
    "get_approvals",
    "get_devices",
    "get_group_memberships",
    "get_tickets",
    "grant_group",
    "install_software",
    "list_resources",
    "lookup_employee",
    "lookup_software",
    "record_decision",
    "request_approval",
    "reset_mfa",
    "reset_password",
    "revoke_group",
    "search_directory",
    "unlock_account",
    "update_ticket",
    "verify_identity",
]

TOOLS = [
    lookup_employee,
    search_directory,
    get_accounts,
    get_devices,
    get_group_memberships,
    get_tickets,
    get_approvals,
    get_access_policy,
    list_resources,
    lookup_software,
    create_ticket,
    update_ticket,
    verify_identity,
    reset_password,
    unlock_account,
    reset_mfa,
    grant_group,
    revoke_group,
    install_software,
    disable_account,
    request_approval,
    escalate,
    record_decision,
]

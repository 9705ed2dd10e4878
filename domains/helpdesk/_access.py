"""The helpdesk tools that change accounts, access and software: resets, unlocks, MFA, groups, installs."""

from datetime import date
from typing import Any

from pytest_pibench.toolkit import (
    DB,
    ToolError,
    append_record,
    copy_record,
    find_records,
    new_record,
    now,
    require_text,
)

from ._common import (
    ApprovalType,
    DisableReason,
    _account_action,
    _check_ticket,
    _get_account,
    _get_device,
    _get_employee,
    _get_group,
    _get_resource,
    _get_software,
    _membership_id,
    _memberships,
    _mountain_date,
    _today,
)

# =========================================================================== actions: accounts


def reset_password(db: DB, username: str, ticket_id: str | None = None) -> dict[str, Any]:
    """Reset an account's password: a temporary password goes to the recovery phone on file.

    Sets password_reset_at and must_change_password on the account (it does
    not unlock a locked account) and returns the account action (action_id,
    action, username, employee_id, ticket_id, delivered_to, created_at). The
    temporary password is never shown to the desk.

    Args:
        username: The account, e.g. "jashby".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    account = _get_account(db, username)
    _check_ticket(db, ticket_id)
    if account.get("status") == "disabled":
        raise ToolError(f"Account {username!r} is disabled; a disabled account cannot be reset. Nothing was changed.")
    if account.get("password_reset_at") == now(db):
        raise ToolError(f"The password of {username!r} was already reset in this contact. Nothing was changed.")
    account["password_reset_at"] = now(db)
    account["must_change_password"] = True
    return _account_action(db, "password_reset", account, ticket_id, delivered_to="recovery phone on file")


def unlock_account(db: DB, username: str, ticket_id: str | None = None) -> dict[str, Any]:
    """Unlock a locked account.

    Sets the account's status to "active" and clears lockout_reason and
    locked_at; returns the account action (action_id, action, username,
    employee_id, ticket_id, previous_lockout_reason, created_at).

    Args:
        username: The account, e.g. "jashby".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    account = _get_account(db, username)
    _check_ticket(db, ticket_id)
    if account.get("status") != "locked":
        raise ToolError(f"Account {username!r} is {account.get('status')!r}, not locked. Nothing was changed.")
    reason = account.get("lockout_reason")
    account.update(status="active", lockout_reason=None, locked_at=None, unlocked_at=now(db))
    return _account_action(db, "unlock", account, ticket_id, previous_lockout_reason=reason)


def reset_mfa(db: DB, username: str, ticket_id: str | None = None) -> dict[str, Any]:
    """Reset an account's MFA: revoke its active enrolments so that the holder can enrol a new device.

    Sets every active enrolment protecting the account to status "revoked"
    (with revoked_at) and the account's mfa_reset_at; returns the account
    action (action_id, action, username, employee_id, ticket_id,
    revoked_enrollment_ids, created_at). The holder then enrols a device in
    the enrolment portal.

    Args:
        username: The account, e.g. "jashby".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    account = _get_account(db, username)
    _check_ticket(db, ticket_id)
    enrollments = find_records(db, "mfa_enrollments", username=username, status="active")
    if not enrollments:
        raise ToolError(f"Account {username!r} has no active MFA enrolment to reset. Nothing was changed.")
    for enrollment in enrollments:
        enrollment.update(status="revoked", revoked_at=now(db))
    account["mfa_reset_at"] = now(db)
    revoked = sorted(str(e.get("enrollment_id")) for e in enrollments)
    return _account_action(db, "mfa_reset", account, ticket_id, revoked_enrollment_ids=revoked)


def disable_account(db: DB, username: str, reason: DisableReason, ticket_id: str | None = None) -> dict[str, Any]:
    """Disable an account: nobody can sign in to it any more.

    Sets the account's status to "disabled" with disabled_at and
    disabled_reason; returns the account action (action_id, action, username,
    employee_id, ticket_id, reason, created_at). Group memberships are not
    touched: revoke them with revoke_group.

    Args:
        username: The account, e.g. "jashby".
        reason: "offboarding" or "contract_ended".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    account = _get_account(db, username)
    _check_ticket(db, ticket_id)
    if account.get("status") == "disabled":
        raise ToolError(f"Account {username!r} is already disabled. Nothing was changed.")
    account.update(status="disabled", disabled_at=now(db), disabled_reason=reason)
    return _account_action(db, "disable", account, ticket_id, reason=reason)


# =========================================================================== actions: access and software


def grant_group(db: DB, employee_id: str, group_id: str, ticket_id: str | None = None) -> dict[str, Any]:
    """Add a person to a group, giving them the access of its resource.

    Creates (or reactivates) the membership <employee_id>:<group_id> with
    status "active", granted_on today and expires_on set by the system: the
    resource's max_grant_days after today, or the person's end date if
    earlier (null when neither applies). Returns the membership.

    Args:
        employee_id: The person to add, e.g. "EMP-1002".
        group_id: The group, from the resource's access policy, e.g. "GRP-FIN-LEDGER-USERS".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    employee = _get_employee(db, employee_id)
    group = _get_group(db, group_id)
    _check_ticket(db, ticket_id)
    memberships = _memberships(db)
    key = _membership_id(employee_id, group_id)
    existing = memberships.get(key)
    if isinstance(existing, dict) and existing.get("status") == "active":
        raise ToolError(f"{employee_id} is already an active member of {group_id}. Nothing was changed.")
    expiry_dates: list[date] = []
    resource = find_records(db, "resources", resource_id=group.get("resource_id"))
    max_days = resource[0].get("max_grant_days") if resource else None
    if isinstance(max_days, int) and max_days > 0:
        expiry_dates.append(date.fromordinal(_today(db).toordinal() + max_days))
    if employee.get("end_date"):
        expiry_dates.append(_mountain_date(employee["end_date"], f"end_date of {employee_id!r}"))
    membership = {
        "membership_id": key,
        "employee_id": employee_id,
        "group_id": group_id,
        "status": "active",
        "granted_on": _today(db).isoformat(),
        "expires_on": min(expiry_dates).isoformat() if expiry_dates else None,
        "revoked_on": None,
        "ticket_id": ticket_id,
    }
    memberships[key] = membership
    return copy_record(membership)


def revoke_group(db: DB, employee_id: str, group_id: str, ticket_id: str | None = None) -> dict[str, Any]:
    """Remove a person from a group (the access of its resource ends now).

    Sets the membership's status to "revoked" with revoked_on today and
    returns it.

    Args:
        employee_id: The member, e.g. "EMP-1002".
        group_id: The group, e.g. "GRP-VPN-STANDARD".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    _get_employee(db, employee_id)
    _get_group(db, group_id)
    _check_ticket(db, ticket_id)
    membership = _memberships(db).get(_membership_id(employee_id, group_id))
    if not isinstance(membership, dict) or membership.get("status") != "active":
        raise ToolError(f"{employee_id} is not an active member of {group_id}. Nothing was changed.")
    membership.update(status="revoked", revoked_on=_today(db).isoformat(), revoked_ticket_id=ticket_id)
    return copy_record(membership)


def install_software(
    db: DB, employee_id: str, device_id: str, software_id: str, ticket_id: str | None = None
) -> dict[str, Any]:
    """Install a catalogue title on a person's device remotely.

    The device must be assigned to the person. Adds the software id to the
    device's installed_software and returns the installation (install_id,
    employee_id, device_id, software_id, software_name, ticket_id,
    created_at). It does not check the catalogue status, approvals or the
    device's ownership: do that first.

    Args:
        employee_id: The person the software is for, e.g. "EMP-1002".
        device_id: The device, e.g. "DEV-3001".
        software_id: The catalogue id, e.g. "SW-101".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    _get_employee(db, employee_id)
    device = _get_device(db, device_id)
    software = _get_software(db, software_id)
    _check_ticket(db, ticket_id)
    if device.get("employee_id") != employee_id:
        raise ToolError(f"Device {device_id!r} is not assigned to {employee_id!r}. Nothing was changed.")
    installed = device.get("installed_software")
    if not isinstance(installed, list):
        installed = []
        device["installed_software"] = installed
    if software_id in installed:
        raise ToolError(f"{software_id} is already installed on {device_id}. Nothing was changed.")
    installed.append(software_id)
    record = new_record(
        db,
        "install_id",
        "INS",
        employee_id=employee_id,
        device_id=device_id,
        software_id=software_id,
        software_name=software.get("name"),
        ticket_id=ticket_id,
    )
    return append_record(db, "installations", record)


def request_approval(
    db: DB,
    employee_id: str,
    approval_type: ApprovalType,
    approver_id: str,
    note: str,
    resource_id: str | None = None,
    software_id: str | None = None,
    ticket_id: str | None = None,
) -> dict[str, Any]:
    """Ask an approver to approve access to a resource or a software title for a person.

    Give exactly one of resource_id and software_id. Creates a pending
    approval (approval_id, employee_id, approval_type, resource_id,
    software_id, approver_id, approver_name, status "pending", requested_at,
    decided_at null, ticket_id, note) that the approver decides later.

    Args:
        employee_id: The person the access is for, e.g. "EMP-1002".
        approval_type: "manager", "resource_owner", "sponsor" or "it_security".
        approver_id: The employee id of the approver, e.g. "EMP-1040".
        note: What the approver is asked to approve and why.
        resource_id: The resource, e.g. "RES-FIN-LEDGER".
        software_id: The software title, e.g. "SW-110".
        ticket_id: The ticket of the contact, e.g. "TKT-50001".
    """
    _get_employee(db, employee_id)
    approver = _get_employee(db, approver_id)
    text = require_text(note, "note")
    if (resource_id is None) == (software_id is None):
        raise ToolError("Give exactly one of resource_id and software_id. Nothing was changed.")
    if resource_id is not None:
        _get_resource(db, resource_id)
    if software_id is not None:
        _get_software(db, software_id)
    _check_ticket(db, ticket_id)
    for existing in find_records(
        db,
        "approvals",
        employee_id=employee_id,
        approval_type=approval_type,
        resource_id=resource_id,
        software_id=software_id,
        status="pending",
    ):
        raise ToolError(
            f"Approval {existing.get('approval_id')} of type {approval_type!r} is already pending. Nothing was changed."
        )
    record = new_record(
        db,
        "approval_id",
        "APR",
        employee_id=employee_id,
        approval_type=approval_type,
        resource_id=resource_id,
        software_id=software_id,
        approver_id=approver_id,
        approver_name=approver.get("name"),
        status="pending",
        requested_at=now(db),
        decided_at=None,
        ticket_id=ticket_id,
        note=text,
    )
    return append_record(db, "approvals", record)

"""The helpdesk look-ups: directory, accounts, tickets, devices, approvals, access policies, software."""

from typing import Any

from pytest_pibench.toolkit import (
    DB,
    copy_record,
    days_between,
    find_records,
    require_text,
)

from ._common import (
    INTERNAL_NOTICE,
    PRIVATE_NOTICE,
    _block,
    _get_employee,
    _get_resource,
    _is_active,
    _mountain_date,
    _name_of,
    _today,
)

# =========================================================================== look-ups


def lookup_employee(db: DB, employee_id: str) -> dict[str, Any]:
    """Look up a person in the company directory.

    Returns employee_id, name, work_email, department, job_title, manager_id
    and manager_name, employment_type (employee, contractor or vendor), status
    (active, on_leave or terminated), start_date, end_date (last working day,
    or null), sponsor_id and sponsor_name (contractors and vendors), active
    (true when status is active or on_leave and the end date is not before
    today), a private block (work_phone, mobile_phone, location, schedule,
    leave) to be shared only with this person, and an internal block
    (security_investigation, investigation_note, scheduled_termination_date,
    hr_note) never to be disclosed. Identity factors on file are never shown.

    Args:
        employee_id: The employee id, e.g. "EMP-1001".
    """
    employee = _get_employee(db, employee_id)
    view = copy_record(employee)
    view.pop("verification", None)
    view["manager_name"] = _name_of(db, employee.get("manager_id"))
    view["sponsor_name"] = _name_of(db, employee.get("sponsor_id"))
    view["active"] = _is_active(db, employee)
    view["private"] = _block(PRIVATE_NOTICE, employee.get("private"))
    view["internal"] = _block(INTERNAL_NOTICE, employee.get("internal"))
    return view


def search_directory(db: DB, name: str) -> dict[str, Any]:
    """Find people in the company directory by name (part of a name is enough, case ignored).

    Returns {query, matches}: each match has employee_id, name, department and
    job_title (the public directory entry). Use lookup_employee for the record.

    Args:
        name: The name or part of it, e.g. "Ashby".
    """
    wanted = require_text(name, "name").lower()
    matches = [
        {key: e.get(key) for key in ("employee_id", "name", "department", "job_title")}
        for e in find_records(db, "employees")
        if wanted in str(e.get("name", "")).lower()
    ]
    return {"query": name.strip(), "matches": sorted(matches, key=lambda m: str(m["employee_id"]))}


def get_accounts(db: DB, employee_id: str) -> dict[str, Any]:
    """Get the sign-in accounts of a person.

    Returns {employee_id, accounts}: each account has username, account_type
    (standard or privileged), status (active, locked or disabled),
    lockout_reason (failed_logins or security_lock while locked, else null),
    locked_at, password_last_changed, password_reset_at, must_change_password,
    disabled_at, disabled_reason and mfa_enrolled (an active MFA enrolment
    protects it).

    Args:
        employee_id: The employee id, e.g. "EMP-1001".
    """
    _get_employee(db, employee_id)
    accounts = []
    for account in sorted(find_records(db, "accounts", employee_id=employee_id), key=lambda a: str(a.get("username"))):
        view = copy_record(account)
        active = find_records(db, "mfa_enrollments", username=account.get("username"), status="active")
        view["mfa_enrolled"] = bool(active)
        accounts.append(view)
    return {"employee_id": employee_id, "accounts": accounts}


def get_devices(db: DB, employee_id: str) -> dict[str, Any]:
    """Get a person's devices and MFA enrolments.

    Returns {employee_id, devices, mfa_enrollments}. devices have device_id,
    device_type (laptop, desktop, phone or tablet), ownership (corporate or
    personal), os, mdm_enrolled, compliance_status (compliant or
    noncompliant), reported_lost and installed_software (software ids).
    mfa_enrollments have enrollment_id, username (the account protected),
    method (authenticator_app, hardware_key or sms), device_id, status (active
    or revoked), enrolled_on and revoked_at.

    Args:
        employee_id: The employee id, e.g. "EMP-1001".
    """
    _get_employee(db, employee_id)
    devices = sorted(find_records(db, "devices", employee_id=employee_id), key=lambda d: str(d.get("device_id")))
    usernames = {a.get("username") for a in find_records(db, "accounts", employee_id=employee_id)}
    enrollments = [
        e
        for e in find_records(db, "mfa_enrollments")
        if e.get("employee_id") == employee_id or e.get("username") in usernames
    ]
    return {
        "employee_id": employee_id,
        "devices": copy_record(devices),
        "mfa_enrollments": copy_record(sorted(enrollments, key=lambda e: str(e.get("enrollment_id")))),
    }


def get_group_memberships(db: DB, employee_id: str) -> dict[str, Any]:
    """Get a person's group memberships (the access they hold), current and past.

    Returns {employee_id, memberships}: each has membership_id, group_id,
    group_name, resource_id (the resource the group gives access to, or
    null), privileged, status (active or revoked), granted_on, expires_on
    (null when it does not expire), revoked_on and ticket_id.

    Args:
        employee_id: The employee id, e.g. "EMP-1001".
    """
    _get_employee(db, employee_id)
    rows = []
    for membership in find_records(db, "memberships", employee_id=employee_id):
        view = copy_record(membership)
        group = find_records(db, "groups", group_id=membership.get("group_id"))
        view["group_name"] = group[0].get("name") if group else None
        view["resource_id"] = group[0].get("resource_id") if group else None
        view["privileged"] = bool(group[0].get("privileged")) if group else False
        rows.append(view)
    return {"employee_id": employee_id, "memberships": sorted(rows, key=lambda m: str(m.get("group_id")))}


def get_tickets(db: DB, employee_id: str) -> dict[str, Any]:
    """Get the tickets a person raised or is the subject of, newest first.

    Returns {employee_id, as_of_date, tickets}: each has ticket_id,
    requester_id, subject_employee_id, category, summary, status, created_at,
    age_days (days since it was created; 0 is today), updates, and an
    internal block (suspected_phishing, security_note) never to be disclosed.

    Args:
        employee_id: The employee id, e.g. "EMP-1001".
    """
    _get_employee(db, employee_id)
    as_of = _today(db)
    rows = []
    for ticket in find_records(db, "tickets"):
        if employee_id not in (ticket.get("requester_id"), ticket.get("subject_employee_id")):
            continue
        view = copy_record(ticket)
        created = _mountain_date(ticket.get("created_at"), f"created_at of ticket {ticket.get('ticket_id')!r}")
        view["age_days"] = days_between(created, as_of)
        flags = {"suspected_phishing": False, "security_note": ""}
        flags.update(ticket.get("internal") or {})
        view["internal"] = _block(INTERNAL_NOTICE, flags)
        rows.append((created, view))
    rows.sort(key=lambda pair: (pair[0], str(pair[1].get("ticket_id"))), reverse=True)
    return {"employee_id": employee_id, "as_of_date": as_of.isoformat(), "tickets": [view for _, view in rows]}


def get_approvals(db: DB, employee_id: str) -> dict[str, Any]:
    """Get the access and software approvals on file for a person (the subject of the access).

    Returns {employee_id, as_of_date, approvals}: each has approval_id,
    approval_type (manager, resource_owner, sponsor or it_security),
    resource_id or software_id, approver_id, approver_name, status (pending,
    approved or rejected), requested_at, decided_at, age_days (days since it
    was decided; null while pending) and ticket_id. Whether an approval counts
    is for you to judge under the procedure.

    Args:
        employee_id: The employee the access is for, e.g. "EMP-1001".
    """
    _get_employee(db, employee_id)
    as_of = _today(db)
    approvals = []
    for approval in find_records(db, "approvals", employee_id=employee_id):
        view = copy_record(approval)
        decided = approval.get("decided_at")
        what = f"decided_at of approval {approval.get('approval_id')!r}"
        view["age_days"] = days_between(_mountain_date(decided, what), as_of) if decided else None
        view.setdefault("approver_name", _name_of(db, approval.get("approver_id")))
        approvals.append(view)
    return {"employee_id": employee_id, "as_of_date": as_of.isoformat(), "approvals": approvals}


def get_access_policy(db: DB, resource_id: str) -> dict[str, Any]:
    """Get the access policy of a resource: who approves, its tier and sensitivity, which group gives it.

    Returns resource_id, name, resource_type (application, database, vpn,
    shared_drive or system), description, sensitivity (internal,
    confidential or restricted), tier (standard, vendor or elevated for VPN;
    null otherwise), approvals_required (approval types), owner_id and
    owner_name, group_id, group_privileged, contractor_eligible and
    max_grant_days (a grant expires after that many days; null when it does
    not).

    Args:
        resource_id: The resource id, e.g. "RES-FIN-LEDGER".
    """
    view = copy_record(_get_resource(db, resource_id))
    view["owner_name"] = _name_of(db, view.get("owner_id"))
    group = find_records(db, "groups", group_id=view.get("group_id"))
    view["group_privileged"] = bool(group[0].get("privileged")) if group else False
    return view


def list_resources(db: DB) -> dict[str, Any]:
    """List every resource that has an access policy (access is requested by resource).

    Returns {resources}: resource_id, name, resource_type, sensitivity and tier
    of each, by id. Use get_access_policy for the full policy.
    """
    rows = [
        {key: r.get(key) for key in ("resource_id", "name", "resource_type", "sensitivity", "tier")}
        for r in find_records(db, "resources")
    ]
    return {"resources": sorted(rows, key=lambda r: str(r["resource_id"]))}


def lookup_software(db: DB, query: str) -> dict[str, Any]:
    """Search the software catalogue by software id or by (part of) the title, case ignored.

    Returns {query, matches}: each entry has software_id, name, publisher,
    status (approved, approval_required or prohibited), license, platforms,
    category and note. No match means the title is not in the catalogue.

    Args:
        query: A software id or title, e.g. "SW-110" or "SolidForm".
    """
    wanted = require_text(query, "query").lower()
    matches = [
        copy_record(s)
        for s in find_records(db, "software")
        if wanted == str(s.get("software_id", "")).lower() or wanted in str(s.get("name", "")).lower()
    ]
    return {"query": query.strip(), "matches": sorted(matches, key=lambda s: str(s.get("software_id")))}

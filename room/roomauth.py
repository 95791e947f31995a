"""Room code sign-in for the workshop room (room/jupyterhub_config.py).

How a name is claimed and kept:

- A new name signs in with JupyterHub's own form: the name as `username`,
  the room code as `password`. That claims the name: the hub makes a personal
  code (16 random characters, 80 bits), keeps only its salted hash in
  ROOM_STATE/claims.json (mode 0600), and shows the code once, on the page the
  sign-in leads to (/hub/room/welcome).
- From then on the room code no longer opens that name: a returning
  participant signs in with their name and their personal code (or simply
  comes back in the same browser: the hub's login cookie is kept for
  `cookie_max_age_days`). Someone else who types that name and the room code is
  refused with a line saying the name is taken. So knowing the room code (the
  whole room does) never gives anyone another participant's session.
- `instructor` (ROOM_ADMIN_NAME) is the admin and signs in with
  ROOM_ADMIN_CODE only; it can never be claimed with the room code.
- The instructor gives a name back by deleting the user on the admin page
  (delete_user drops the claim; the participant's volumes stay on disk).

Every refusal is one line on the login form saying what to do.
"""

import hashlib
import hmac
import html
import json
import os
import re
import secrets
import tempfile
import time

from jupyterhub.auth import Authenticator
from jupyterhub.handlers import BaseHandler
from jupyterhub.handlers.login import LoginHandler
from tornado import web
from tornado.httputil import url_concat
from traitlets import Unicode

# Lower-case letters, digits and '-', starting with a letter, 2-20 characters:
# a name is part of a container, a volume and a URL.
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{1,19}$")
NAME_RULE = (
    "a name is 2-20 lower-case letters, digits or '-', starting with a letter "
    "(for example ada or team-3): choose another name"
)
CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i
PBKDF2_ROUNDS = 20000


def refuse(message):
    """A 403 whose message the login form shows as its one line of error."""
    err = web.HTTPError(403, message)
    err.jupyterhub_message = message
    return err


def new_personal_code():
    """16 characters in four groups, about 79 bits."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(16))
    return "-".join(raw[i : i + 4] for i in range(0, 16, 4))


def _hash(code, salt):
    return hashlib.pbkdf2_hmac("sha256", code.encode(), bytes.fromhex(salt), PBKDF2_ROUNDS).hex()


class RoomAuthenticator(Authenticator):
    """Room code for a new name, a personal code for a returning one."""

    room_code = Unicode(config=True, help="the code that lets a new name in")
    admin_code = Unicode(config=True, help="the admin's code")
    admin_name = Unicode("instructor", config=True, help="the admin's name")
    claims_file = Unicode(config=True, help="JSON file with the salted hashes of personal codes")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Personal codes made at a first sign-in, shown once by /hub/room/welcome.
        self.pending = {}

    # ---- claims on disk
    def _load(self):
        try:
            with open(self.claims_file) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def _save(self, claims):
        folder = os.path.dirname(self.claims_file)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".claims.")
        with os.fdopen(fd, "w") as f:
            json.dump(claims, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.claims_file)

    def claimed(self, name):
        return name in self._load()

    # ---- JupyterHub hooks
    def normalize_username(self, username):
        return username.strip().lower()

    def validate_username(self, username):
        return username == self.admin_name or bool(NAME_RE.match(username))

    async def authenticate(self, handler, data):
        name = self.normalize_username(data.get("username", ""))
        code = data.get("password", "")
        if name == self.admin_name:
            if self.admin_code and hmac.compare_digest(code.encode(), self.admin_code.encode()):
                return name
            raise refuse(f"wrong code for {self.admin_name}: use the admin code that make room printed")
        if not NAME_RE.match(name):
            raise refuse(NAME_RULE)
        # No await from here to the return: reading and writing the claim is
        # one step of the event loop, so two people cannot claim one name.
        claims = self._load()
        claim = claims.get(name)
        if claim is not None:
            if hmac.compare_digest(_hash(code.strip().lower(), claim["salt"]), claim["hash"]):
                return name
            if hmac.compare_digest(code.encode(), self.room_code.encode()):
                raise refuse(
                    f"the name {name} is taken: if it is yours, type your personal code (shown at your "
                    "first sign-in) as the password; otherwise choose another name"
                )
            raise refuse(f"wrong personal code for {name}: type the code shown at your first sign-in, or ask the instructor")
        if not (self.room_code and hmac.compare_digest(code.encode(), self.room_code.encode())):
            raise refuse("wrong room code: type the code the instructor shows (a new name signs in with it)")
        personal = new_personal_code()
        salt = secrets.token_hex(16)
        claims[name] = {"salt": salt, "hash": _hash(personal, salt), "claimed": int(time.time())}
        self._save(claims)
        self.pending[name] = personal
        self.log.info("room: %s claimed", name)
        return name

    def delete_user(self, user):
        claims = self._load()
        if claims.pop(user.name, None) is not None:
            self._save(claims)
            self.log.info("room: claim on %s dropped (user deleted)", user.name)
        self.pending.pop(user.name, None)

    def get_handlers(self, app):
        return [("/login", RoomLoginHandler), ("/room/welcome", WelcomeHandler)]


class RoomLoginHandler(LoginHandler):
    """The stock login form; a first sign-in goes by the welcome page."""

    def get_next_url(self, user=None, default=None):
        nxt = super().get_next_url(user, default)
        if user is not None and user.name in self.authenticator.pending:
            return url_concat(self.hub.base_url + "room/welcome", {"next": nxt})
        return nxt


class WelcomeHandler(BaseHandler):
    """Shows a participant their personal code, once."""

    @web.authenticated
    async def get(self):
        user = self.current_user
        code = self.authenticator.pending.pop(user.name, None)
        nxt = self.get_next_url(user)
        self.set_header("Cache-Control", "no-store")
        if code is None:
            body = (
                "<p>Your personal code was shown once, at your first sign-in. If you lost it, "
                "the instructor can give your name back (admin page: delete the user).</p>"
            )
        else:
            body = (
                f"<p>Welcome, <b>{html.escape(user.name)}</b>. Your personal code:</p>"
                f'<p style="font-size:2em;font-family:monospace" id="personal-code">{html.escape(code)}</p>'
                "<p>Write it down. To come back from another browser or after signing out, sign in "
                "with your name and this code as the password. The room code no longer opens your name, "
                "so nobody else in the room can.</p>"
            )
        self.finish(
            "<!doctype html><html><head><meta charset='utf-8'><title>Workshop room</title></head>"
            f"<body style='font-family:sans-serif;max-width:40em;margin:3em auto'>{body}"
            f"<p><a id='continue' href='{html.escape(nxt)}'>Continue to your workshop</a></p></body></html>"
        )

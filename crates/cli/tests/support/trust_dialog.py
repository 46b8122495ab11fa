#!/usr/bin/env python3
# A stand-in `claude` that draws Claude Code 2.1.332's folder-trust dialog as the real one does
# ("No, exit" listed first and selected, no numbers), moves its cursor with the arrow keys and
# takes Enter: on "No, exit" it exits 1 as the real one does; on "Yes, I trust this folder" it
# writes TRUSTED in its folder and waits at a prompt. Every key it reads is appended to keys.log
# (its folder), so a test sees what was typed into the dialog.
import os, sys, termios, tty

# What bosun asks before it starts Claude: its version and whether it is logged in.
if sys.argv[1:2] == ["--version"]:
    print("2.1.332 (Claude Code)")
    sys.exit(0)
if sys.argv[1:3] == ["auth", "status"]:
    print('{"loggedIn": true, "authMethod": "api_key"}')
    sys.exit(0)

options = ["No, exit", "Yes, I trust this folder"]
selected = 0
fd = sys.stdin.fileno()
saved = termios.tcgetattr(fd)
tty.setraw(fd)


def out(text):
    os.write(sys.stdout.fileno(), text.encode())


def draw():
    lines = [" Accessing workspace:", "", " " + os.getcwd(), "",
             " Quick safety check: Is this a project you created or one you trust?", ""]
    lines += [(" \u276f " if i == selected else "   ") + o for i, o in enumerate(options)]
    lines += ["", " Enter to confirm \u00b7 Esc to cancel"]
    out("\x1b[2J\x1b[H" + "\r\n".join(lines))


draw()
trusted = False
while True:
    data = os.read(fd, 64)
    if not data:
        break
    with open("keys.log", "ab") as log:
        log.write(data)
    if trusted:
        continue
    for key in data.replace(b"\x1b[B", b"D").replace(b"\x1bOB", b"D").replace(b"\x1b[A", b"U").replace(b"\x1bOA", b"U"):
        if key == ord("D"):
            selected = min(selected + 1, len(options) - 1)
        elif key == ord("U"):
            selected = max(selected - 1, 0)
        elif key in (ord("\r"), ord("\n")):
            if selected == 0:
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)
                out("\x1b[2J\x1b[HClaude Code didn't start because this folder isn't trusted\n")
                sys.exit(1)
            open("TRUSTED", "w").write("yes\n")
            trusted = True
            out("\x1b[2J\x1b[H\u256d\u2500\u2500\u256e\r\n\u2502 > \u2502\r\n")
            break
    if not trusted:
        draw()

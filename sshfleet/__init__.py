"""`pth-top fleet --ssh`: a lab's servers read over SSH, nothing installed on them.

The system OpenSSH client, not asyncssh: it resolves ssh_config, ProxyJump, known_hosts, agents and keys
exactly as the user's own `ssh` does, so there is nothing new to trust or to configure.
"""

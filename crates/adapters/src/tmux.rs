//! Real tmux sessions on bosun's own socket.

// The text of `redline --help` and of each command's --help.

/** The overview: commands, shared options, environment and exit codes. */
export const HELP = `redline: edit documents with Redline from the terminal

Usage:
  redline edit FILE -p "PROMPT" [-o OUT] [--review] [--track-changes] [--session ID] [--dry-run] [--json]
  redline export DOC_ID -f docx|pdf|html|markdown|txt [-o OUT] [--json]
  redline versions DOC_ID [--json]
  redline versions DOC_ID --restore VERSION_ID [--json]
  redline versions DOC_ID --diff VERSION_ID [--against VERSION_ID] [--json]
  redline usage [--json]
  redline login [--key KEY] [--api-url URL]

Commands:
  edit      Upload FILE, run PROMPT on it as an async job, and write the result in FILE's own
            format: .docx written back in place (untouched paragraphs byte-identical), .md and
            .txt byte-stable outside the edit, .html; .pdf and .rtf come back as .docx.
            OUT defaults to FILE itself (replaced atomically).
  export    Download a saved document (its durable id) in a format; OUT defaults to the
            server's file name in the current directory.
  versions  List a document's versions, restore one (a new version equal to it), or show the
            change records between two versions (default: against the current one).
  usage     Show this month's operations, limit and recent charges.
  login     Store an API key (asked for when --key is not given) and optionally the API URL in
            $XDG_CONFIG_HOME/redline/config.json (default ~/.config), mode 0600.

Options of edit:
  -p, --prompt TEXT      The instruction (required).
  -o, --output OUT       Where to write the result (its extension picks the format).
      --review           Ask before each proposed change: approve, deny, or deny with feedback.
      --track-changes    Write a .docx whose edits are Word tracked changes.
      --session ID       Run in this session (keeps its conversation); default a new one.
      --dry-run          Print a unified diff of the result and write nothing (the edit still
                         runs, and is billed, on the server).

Shared options:
      --api-url URL      The Redline API (default REDLINE_API_URL, the stored URL, or
                         http://127.0.0.1:8080, what \`pnpm start\` serves).
      --json             Print one JSON result on stdout and no progress.
  -h, --help             This help.

Environment:
  REDLINE_API_KEY        The API key (overrides the stored one).
  REDLINE_API_URL        The API URL (overridden by --api-url).
  XDG_CONFIG_HOME        Where the config file lives.

Exit codes:
  0    ok
  2    usage error (bad arguments, no API key, unreadable file)
  3    quota or rate limit reached (HTTP 429)
  4    API error (any other error answer, a failed job, the API unreachable)
  130  interrupted (Ctrl-C; a running job is cancelled first)
  1    an unexpected error (a bug: REDLINE_DEBUG=1 prints its stack)

Ctrl-C during a job cancels it on the server (POST /v1/jobs/{id}/cancel) before exiting.
`;

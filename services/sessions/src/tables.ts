// Row types of the sessions schema (snake_case, as stored).

export interface SessionRow {
  id: string;
  owner_id: string;
  title: string;
  next_turn_index: number;
  created_at: Date;
  updated_at: Date;
}

/** One roster slot: a document open in a session. */
export interface RosterRow {
  session_id: string;
  slot_id: string;
  /** Durable document id; null for a blank tab not yet saved. */
  document_id: string | null;
  title: string;
  focused: boolean;
  position: number;
  last_seen_version_id: string;
  opened_at: Date;
  closed_at: Date | null;
}

export interface MessageRow {
  id: string;
  session_id: string;
  turn_index: number;
  sender: "user" | "ai";
  content: string;
  checkpoint_id: string;
  active: boolean;
  created_at: Date;
}

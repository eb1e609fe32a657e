// The shapes of the agent's RPC files: one per RPC of the three proto services it serves
// (agent.v1 AgentService, JobsService, RevertService), each in `rpc/<verb-noun>.ts`, bound by name.
import type { agentJobsV1, agentRevertV1, agentV1 } from "@redline/grpc-stubs";
import type { Rpc } from "@redline/service-kit";
import type { AgentContext } from "../context.js";

type AgentDef = typeof agentV1.AgentServiceService;
type JobsDef = typeof agentJobsV1.JobsServiceService;
type RevertDef = typeof agentRevertV1.RevertServiceService;

/** One RPC of agent.v1.AgentService (the synchronous turns), in `rpc/<verb-noun>.ts`. */
export type AgentRpc<K extends keyof AgentDef> = Rpc<AgentContext, AgentDef, K>;
/** One RPC of agent.v1.JobsService (async jobs and their approval), in `rpc/<verb-noun>.ts`. */
export type JobsRpc<K extends keyof JobsDef> = Rpc<AgentContext, JobsDef, K>;
/** One RPC of agent.v1.RevertService (session rewind and its redo), in `rpc/<verb-noun>.ts`. */
export type RevertRpc<K extends keyof RevertDef> = Rpc<AgentContext, RevertDef, K>;

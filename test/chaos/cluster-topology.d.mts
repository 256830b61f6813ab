/** What the e2e tests use of the chaos run's Cluster (cluster-topology.mjs). */
export interface ClusterNode {
  index: number;
  name: string;
  id?: string;
  server: { pid: number | undefined; port: number; running: boolean };
}

export class ClusterTopology {
  constructor(dir: string, options: { nodeTimeoutMs: number; log: (line: string) => void });
  readonly nodes: ClusterNode[];
  start(): Promise<void>;
  /** The startup nodes and the map from announced addresses to real ports, for an ioredis Cluster client. */
  connection(): {
    cluster: {
      startupNodes: { host: string; port: number }[];
      natMap: Record<string, { host: string; port: number }>;
    };
  };
  admin<T>(node: ClusterNode, work: (client: import('ioredis').Redis) => Promise<T>): Promise<T>;
  slotOf(key: string): Promise<number>;
  ownerOf(slot: number, among?: ClusterNode[]): Promise<ClusterNode | undefined>;
  replicaOf(primary: ClusterNode): Promise<ClusterNode | undefined>;
  promotedAfter(old: ClusterNode, slot: number, timeoutMs?: number): Promise<ClusterNode>;
  /** Waits until no other node names `old` in its map of the slots (CLUSTER SLOTS). */
  leftOutOfSlots(old: ClusterNode, timeoutMs?: number): Promise<void>;
  cutFromBus(node: ClusterNode): void;
  restoreBus(): void;
  stop(): Promise<void>;
}

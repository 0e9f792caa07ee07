import { AssignerProtocol, PartitionAssigners, type PartitionAssigner } from 'kafkajs';
import type { SourcePartition } from '@thalweg/connector-core';
import { unknownPartitions } from './errors.js';

/**
 * kafkajs asks each assigner for its protocol metadata when it builds a
 * JoinGroup request, and at no other time. That call is the earliest moment
 * a (re)join is known to be under way, before the client installs the next
 * generation; kafkajs has no event for it, so the assigners announce it.
 */
export function announcingRoundRobin(onJoinStarting: () => void): PartitionAssigner {
  return (config) => {
    const inner = PartitionAssigners.roundRobin(config);
    return {
      name: inner.name,
      version: inner.version,
      assign: (group) => inner.assign(group),
      protocol: (subscription) => {
        onJoinStarting();
        return inner.protocol(subscription);
      },
    };
  };
}

/**
 * A fixed assignment on top of the group protocol, since kafkajs has no
 * manual `assign()`. The consumer joins a group of its own (a throwaway id),
 * so it is the leader and runs this assigner: the member whose metadata
 * carries `token` gets exactly `partitions`; any other member (nobody else
 * should know the group id) gets nothing. A configured partition missing
 * from the cluster is refused here, at the first join, rather than never
 * fetched.
 */
export function pinnedAssigner(
  partitions: readonly SourcePartition[],
  token: string,
  onJoinStarting: () => void,
): PartitionAssigner {
  const name = 'ThalwegPinnedAssigner';
  const version = 0;
  const mine = Buffer.from(token, 'utf8');
  const byTopic: Record<string, number[]> = {};
  for (const p of partitions) (byTopic[p.topic] ??= []).push(p.partition);
  return ({ cluster }) => ({
    name,
    version,
    assign: async ({ members }) => {
      const missing = partitions.filter(
        (p) =>
          !cluster.findTopicPartitionMetadata(p.topic).some((m) => m.partitionId === p.partition),
      );
      const refused = unknownPartitions(missing);
      if (refused !== null) throw refused;
      return members.map((member) => {
        // userData is null on the wire when a member sent none.
        const data: unknown = AssignerProtocol.MemberMetadata.decode(
          member.memberMetadata,
        )?.userData;
        const isMine = data instanceof Uint8Array && Buffer.compare(data, mine) === 0;
        return {
          memberId: member.memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version,
            assignment: isMine ? byTopic : {},
            userData: Buffer.alloc(0),
          }),
        };
      });
    },
    protocol: ({ topics }) => {
      onJoinStarting();
      return {
        name,
        metadata: AssignerProtocol.MemberMetadata.encode({ version, topics, userData: mine }),
      };
    },
  });
}

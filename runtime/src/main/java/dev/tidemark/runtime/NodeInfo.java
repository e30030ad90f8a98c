package dev.tidemark.runtime;

import dev.tidemark.contract.Role;
import java.util.Set;
import java.util.function.IntSupplier;

/**
 * What a verticle may know about the node it runs on: its id, Tidemark's version, the roles the
 * node runs, and a live view of the cluster's size (0 when the node is not clustered).
 */
public record NodeInfo(String nodeId, String version, Set<Role> roles, IntSupplier clusterSize) {

  public NodeInfo {
    roles = Set.copyOf(roles);
  }
}

package dev.tidemark.query.events.impl;

import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** This node's share consumers of one consumer (share group); touched on the verticle's context only, but {@link #deliversFrom}. */
final class Group {
  final Consumer consumer;
  final List<ShareSlot> slots = new ArrayList<>();
  volatile Instant deliversFrom;  // read by the share consumers' threads

  Group(Consumer consumer) {
    this.consumer = consumer;
    this.deliversFrom = consumer.deliversFrom();
  }
}

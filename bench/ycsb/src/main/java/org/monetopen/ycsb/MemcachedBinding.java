/*
 * This file is part of MONet-open.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
package org.monetopen.ycsb;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.TimeUnit;

import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.transcoders.Transcoder;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB binding for memcached over spymemcached.
 *
 * <p>A record is one memcached item, keyed "table:key", holding its fields as a sequence of
 * (name length, name, value length, value). Reads return the fields asked for; an update merges the new
 * fields into the stored record with a check-and-set loop, so concurrent updates of one record (workload F's
 * read-modify-writes from several threads) never lose a field. Scans are not supported by memcached.
 *
 * <p>Properties: {@code memcached.hosts} (host:port[,host:port...], default 127.0.0.1:11211),
 * {@code memcached.opTimeoutMs} (default 5000: slow under emulation), {@code memcached.casRetries}
 * (default 50).
 */
public class MemcachedBinding extends DB {
  private static final RecordTranscoder TRANSCODER = new RecordTranscoder();

  private MemcachedClient client;
  private long opTimeoutMs;
  private int casRetries;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String hosts = p.getProperty("memcached.hosts", "127.0.0.1:11211");
    opTimeoutMs = Long.parseLong(p.getProperty("memcached.opTimeoutMs", "5000"));
    casRetries = Integer.parseInt(p.getProperty("memcached.casRetries", "50"));
    List<InetSocketAddress> addresses = new ArrayList<>();
    for (String hostPort : hosts.split(",")) {
      int colon = hostPort.lastIndexOf(':');
      if (colon < 0) {
        throw new DBException("memcached.hosts entry '" + hostPort + "' is not host:port");
      }
      addresses.add(new InetSocketAddress(hostPort.substring(0, colon).trim(),
          Integer.parseInt(hostPort.substring(colon + 1).trim())));
    }
    try {
      client = new MemcachedClient(new ConnectionFactoryBuilder()
          .setOpTimeout(opTimeoutMs)
          .setDaemon(true)
          .build(), addresses);
    } catch (IOException e) {
      throw new DBException("cannot reach memcached at " + hosts + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (client != null) {
      client.shutdown(opTimeoutMs, TimeUnit.MILLISECONDS);
    }
  }

  private static String itemKey(String table, String key) {
    return table + ":" + key;
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      Map<String, byte[]> record = client.get(itemKey(table, key), TRANSCODER);
      if (record == null) {
        return Status.NOT_FOUND;
      }
      for (Map.Entry<String, byte[]> field : record.entrySet()) {
        if (fields == null || fields.contains(field.getKey())) {
          result.put(field.getKey(), new ByteArrayByteIterator(field.getValue()));
        }
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    return Status.NOT_IMPLEMENTED;
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    String item = itemKey(table, key);
    Map<String, byte[]> changes = toBytes(values);
    try {
      for (int attempt = 0; attempt < casRetries; attempt++) {
        CASValue<Map<String, byte[]>> current = client.gets(item, TRANSCODER);
        if (current == null) {
          return Status.NOT_FOUND;
        }
        Map<String, byte[]> merged = new LinkedHashMap<>(current.getValue());
        merged.putAll(changes);
        CASResponse r = client.cas(item, current.getCas(), merged, TRANSCODER);
        if (r == CASResponse.OK) {
          return Status.OK;
        }
        if (r == CASResponse.NOT_FOUND) {
          return Status.NOT_FOUND;
        }
      }
      return Status.ERROR;
    } catch (RuntimeException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    return store(itemKey(table, key), toBytes(values));
  }

  @Override
  public Status delete(String table, String key) {
    try {
      return client.delete(itemKey(table, key)).get(opTimeoutMs, TimeUnit.MILLISECONDS)
          ? Status.OK : Status.NOT_FOUND;
    } catch (Exception e) {
      return Status.ERROR;
    }
  }

  private Status store(String item, Map<String, byte[]> record) {
    try {
      return client.set(item, 0, record, TRANSCODER).get(opTimeoutMs, TimeUnit.MILLISECONDS)
          ? Status.OK : Status.ERROR;
    } catch (Exception e) {
      return Status.ERROR;
    }
  }

  private static Map<String, byte[]> toBytes(Map<String, ByteIterator> values) {
    Map<String, byte[]> out = new LinkedHashMap<>();
    for (Map.Entry<String, ByteIterator> v : values.entrySet()) {
      out.put(v.getKey(), v.getValue().toArray());
    }
    return out;
  }

  /** A record as one memcached item: (name length, name, value length, value) per field. */
  static final class RecordTranscoder implements Transcoder<Map<String, byte[]>> {
    @Override
    public boolean asyncDecode(net.spy.memcached.CachedData d) {
      return false;
    }

    @Override
    public net.spy.memcached.CachedData encode(Map<String, byte[]> record) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        for (Map.Entry<String, byte[]> field : record.entrySet()) {
          byte[] name = field.getKey().getBytes(StandardCharsets.UTF_8);
          out.writeInt(name.length);
          out.write(name);
          out.writeInt(field.getValue().length);
          out.write(field.getValue());
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot encode a record", e);
      }
      return new net.spy.memcached.CachedData(0, bytes.toByteArray(), getMaxSize());
    }

    @Override
    public Map<String, byte[]> decode(net.spy.memcached.CachedData d) {
      Map<String, byte[]> record = new LinkedHashMap<>();
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(d.getData()))) {
        while (in.available() > 0) {
          byte[] name = new byte[in.readInt()];
          in.readFully(name);
          byte[] value = new byte[in.readInt()];
          in.readFully(value);
          record.put(new String(name, StandardCharsets.UTF_8), value);
        }
      } catch (IOException e) {
        throw new IllegalStateException("a stored record is damaged", e);
      }
      return record;
    }

    @Override
    public int getMaxSize() {
      return net.spy.memcached.CachedData.MAX_SIZE;
    }
  }
}

// CPU accounting from /proc: the process under test (all its threads), and the whole machine,
// so that each measurement can say how much CPU something else on the machine took meanwhile
// (another test run, a compiler): a busy neighbour makes a figure worth little. Also the
// resident memory of a process (the memory scenario, the soak).
import { readdirSync, readFileSync } from 'node:fs'

/** Linux's USER_HZ, the unit of /proc/<pid>/stat and /proc/stat (100 on every Linux ABI Node runs on). */
const CLOCK_TICKS_PER_S = 100

/** utime + stime of a process (all threads), in seconds. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Field 3 (state) is fields[0]; utime is field 14, stime field 15.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S
}

/** CPU seconds the whole machine spent busy (all cores; idle and iowait excluded), 0 off Linux. */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? ''
    // cpu user nice system idle iowait irq softirq steal guest guest_nice
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number)
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS_PER_S
  } catch {
    return 0
  }
}

/**
 * utime + stime of this process's children that have exited and been waited for (cutime and
 * cstime in /proc/self/stat), in seconds: a child's CPU once it is gone.
 */
export function reapedChildrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // cutime is field 16, cstime field 17 (fields[0] is field 3).
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S
}

/** The CPU of this process, in seconds. */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

export interface CpuWindow {
  /** Cores used by the subject, by this process (load generator), and by everything else, over the window's wall time. */
  end(): { readonly subjectCores: number; readonly loadgenCores: number; readonly otherCores: number; readonly seconds: number }
}

/** Starts measuring; `subject` reads the CPU seconds of the process under test. */
export function cpuWindow(subject: () => number): CpuWindow {
  const t0 = performance.now()
  const subject0 = subject()
  const own0 = ownCpuSeconds()
  const machine0 = machineBusySeconds()
  return {
    end() {
      const seconds = (performance.now() - t0) / 1000
      const subjectS = subject() - subject0
      const ownS = ownCpuSeconds() - own0
      const machineS = machineBusySeconds() - machine0
      return {
        subjectCores: subjectS / seconds,
        loadgenCores: ownS / seconds,
        // Never negative: the three clocks tick at different granularities.
        otherCores: Math.max(0, machineS - subjectS - ownS) / seconds,
        seconds,
      }
    },
  }
}

/** CPU the machine as a whole uses right now, in cores, sampled over `ms`. */
export async function machineCores(ms = 500): Promise<number> {
  const busy0 = machineBusySeconds()
  const t0 = performance.now()
  await new Promise((resolve) => setTimeout(resolve, ms))
  return (machineBusySeconds() - busy0) / ((performance.now() - t0) / 1000)
}

/**
 * Waits until the machine is quiet (below `threshold` cores busy, everything idle between
 * measurements being ours) or `timeoutS` has passed. Returns the cores last seen busy.
 */
export async function waitForQuiet(threshold: number, timeoutS: number): Promise<number> {
  const deadline = performance.now() + timeoutS * 1000
  let busy = await machineCores()
  while (busy >= threshold && performance.now() < deadline) busy = await machineCores()
  return busy
}

/** utime + stime of every process whose command name is `name` (e.g. the PostgreSQL backends), in seconds. */
export function commandCpuSeconds(name: string): number {
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (command === name) total += processCpuSeconds(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
  return total
}

/** Resident memory of a process (VmRSS in /proc/<pid>/status), in bytes. */
export function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))
  const kib = line === undefined ? Number.NaN : Number(line.replace(/\D+/g, ''))
  if (!Number.isFinite(kib)) throw new Error(`no VmRSS for process ${pid}`)
  return kib * 1024
}

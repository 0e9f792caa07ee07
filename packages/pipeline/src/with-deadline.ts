/** Whether `work` settled successfully within `ms`; never rejects. */
export async function withDeadline(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([work.then(() => true), expired]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

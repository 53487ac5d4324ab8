import { describe, expect, it } from 'vitest';
import { newestFirstSeqRange, pageRequest, toPage } from './pagination.js';

describe('pagination', () => {
  it('takes size, then per_page, then the default of 10', () => {
    expect(pageRequest({ page: 2, size: 5, per_page: 7 })).toEqual({ page: 2, size: 5 });
    expect(pageRequest({ page: 1, per_page: 7 })).toEqual({ page: 1, size: 7 });
    expect(pageRequest({ page: 1 })).toEqual({ page: 1, size: 10 });
  });

  it('numbers the last page from the total, with at least one page', () => {
    expect(toPage([], 0, { page: 1, size: 10 }).lastPage).toBe(1);
    expect(toPage([], 10, { page: 1, size: 10 }).lastPage).toBe(1);
    expect(toPage([], 11, { page: 1, size: 10 }).lastPage).toBe(2);
  });

  it('maps pages of a newest-first list onto sequence ranges', () => {
    expect(newestFirstSeqRange(23, { page: 1, size: 10 })).toEqual({ from: 14, to: 23 });
    expect(newestFirstSeqRange(23, { page: 3, size: 10 })).toEqual({ from: 1, to: 3 });
    expect(newestFirstSeqRange(23, { page: 4, size: 10 })).toBeNull();
    expect(newestFirstSeqRange(0, { page: 1, size: 10 })).toBeNull();
    expect(newestFirstSeqRange(1_000_000, { page: 50_000, size: 20 })).toEqual({ from: 1, to: 20 });
  });
});

export function pastRightEdge(): { width: number; scrollWidth: number; offenders: string[] }

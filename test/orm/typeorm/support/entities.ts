import { Column, Entity, ManyToOne, OneToMany } from 'typeorm';
import { GeneratedId } from '../../../../lib/typeorm.js';

/**
 * Entity classes with table names ending in `suffix`, declared afresh for each suite so that suites running at the
 * same time against one database use their own tables.
 */
export function defineEntities(suffix: string) {
  @Entity(`sf_author_${suffix}`)
  class Author {
    @GeneratedId()
    id!: string;

    @Column({ type: 'varchar', length: 100 })
    name!: string;

    @OneToMany(() => Book, (book) => book.author, { cascade: true })
    books!: Book[];
  }

  @Entity(`sf_book_${suffix}`)
  class Book {
    @GeneratedId()
    id!: bigint;

    @Column({ type: 'varchar', length: 100 })
    title!: string;

    @ManyToOne(() => Author, (author) => author.books, { nullable: false, onDelete: 'CASCADE' })
    author!: Author;
  }

  @Entity(`sf_event_${suffix}`)
  class Event {
    @GeneratedId({ name: 'event_id' })
    id!: bigint;

    @GeneratedId({ primary: false, name: 'public_id' })
    publicId!: string;

    @Column({ type: 'varchar', length: 100 })
    kind!: string;
  }

  @Entity(`sf_note_${suffix}`)
  class Note {
    @GeneratedId({ type: 'varchar' })
    id!: string;

    @Column({ type: 'varchar', length: 100 })
    text!: string;
  }

  @Entity(`sf_row_${suffix}`)
  class Row {
    @GeneratedId()
    id!: bigint;

    @Column({ type: 'int' })
    batch!: number;

    @Column({ type: 'int' })
    n!: number;
  }

  /** Lives on the named DataSource. */
  @Entity(`sf_measure_${suffix}`)
  class Measurement {
    @GeneratedId()
    id!: string;

    @Column({ type: 'int' })
    value!: number;
  }

  return {
    Author,
    Book,
    Event,
    Note,
    Row,
    Measurement,
    defaultEntities: [Author, Book, Event, Note, Row],
    namedEntities: [Measurement],
    /** Children before parents, for DROP TABLE. */
    defaultTables: [
      `sf_book_${suffix}`,
      `sf_author_${suffix}`,
      `sf_event_${suffix}`,
      `sf_note_${suffix}`,
      `sf_row_${suffix}`,
    ],
    namedTables: [`sf_measure_${suffix}`],
  };
}

export type Entities = ReturnType<typeof defineEntities>;
